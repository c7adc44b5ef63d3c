package group

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"pgregory.net/rapid"
)

// rapidTester lets rapid's *T drive the harness.
type rapidTester struct{ *rapid.T }

func (rapidTester) Helper() {}

// modelKey names one committed offset in the model.
type modelKey struct {
	group     string
	partition int32
}

// modelWrite is a change on its way to the log, as the model sees it: an
// offset (or, with deleted, the removal of a group's offsets or of one
// offset), with the answer the coordinator owes for it.
type modelWrite struct {
	key         modelKey
	offset      int64
	wholeGroup  bool
	deleteOne   bool
	commit      *answer[*kmsg.OffsetCommitResponse]
	deleteGroup *answer[*kmsg.DeleteGroupsResponse]
	deleteKey   *answer[*kmsg.OffsetDeleteResponse]
}

// TestOffsetsMatchAMapModel runs random commits, offset and group
// deletions, log commits, fetches and crashes against the dumbest model
// of committed offsets: a map, changed only when the log commits a
// change, in log order. Every fetch must match it, and every request must
// be answered exactly when its records commit.
func TestOffsetsMatchAMapModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		t := rapidTester{rt}
		tc := newTestCoordinator(t, testConfig())
		tc.log.autoCommit = false
		committed := map[modelKey]int64{}
		var pending []*modelWrite
		// deleting marks groups whose deletion is on its way: they
		// refuse commits until it lands.
		deleting := map[string]bool{}
		groups := rapid.SampledFrom([]string{"g1", "g2", "g3"})
		partitions := rapid.Int32Range(0, 2)

		rt.Repeat(map[string]func(*rapid.T){
			"commit": func(rt *rapid.T) {
				key := modelKey{groups.Draw(rt, "group"), partitions.Draw(rt, "partition")}
				offset := rapid.Int64Range(0, 1000).Draw(rt, "offset")
				a := tc.commit(key.group, "", -1, "orders", key.partition, offset)
				if deleting[key.group] {
					code := a.require(t, "commit to a group being deleted").Topics[0].Partitions[0].ErrorCode
					requireCode(t, "commit to a group being deleted", code, kerr.CoordinatorNotAvailable)
					return
				}
				a.requirePending(t, "commit before the log commits")
				pending = append(pending, &modelWrite{key: key, offset: offset, commit: a})
			},
			"deleteOffset": func(rt *rapid.T) {
				key := modelKey{groups.Draw(rt, "group"), partitions.Draw(rt, "partition")}
				g := tc.group(key.group)
				req := kmsg.NewPtrOffsetDeleteRequest()
				req.Group = key.group
				topic := kmsg.NewOffsetDeleteRequestTopic()
				topic.Topic = "orders"
				topic.Partitions = []kmsg.OffsetDeleteRequestTopicPartition{{Partition: key.partition}}
				req.Topics = append(req.Topics, topic)
				a := &answer[*kmsg.OffsetDeleteResponse]{}
				tc.c.OffsetDelete(req, a.done)
				tp := topicPartition{"orders", key.partition}
				switch {
				case g == nil || deleting[key.group]:
					requireCode(t, "offset delete of a missing group", a.require(t, "offset delete").ErrorCode, kerr.GroupIDNotFound)
				case !g.hasOffset(tp):
					a.require(t, "offset delete of nothing")
				default:
					a.requirePending(t, "offset delete before the log commits")
					pending = append(pending, &modelWrite{key: key, deleteOne: true, deleteKey: a})
				}
			},
			"deleteGroup": func(rt *rapid.T) {
				group := groups.Draw(rt, "group")
				req := kmsg.NewPtrDeleteGroupsRequest()
				req.Groups = []string{group}
				a := &answer[*kmsg.DeleteGroupsResponse]{}
				tc.c.DeleteGroups(req, a.done)
				if tc.group(group) == nil || deleting[group] {
					requireCode(t, "deleting a missing group", a.require(t, "delete").Groups[0].ErrorCode, kerr.GroupIDNotFound)
					return
				}
				a.requirePending(t, "group deletion before the log commits")
				deleting[group] = true
				pending = append(pending, &modelWrite{key: modelKey{group: group}, wholeGroup: true, deleteGroup: a})
			},
			"logCommits": func(rt *rapid.T) {
				tc.log.commit(0)
				for _, w := range pending {
					switch {
					case w.commit != nil:
						committed[w.key] = w.offset
						requireCode(t, "commit", w.commit.require(t, "commit").Topics[0].Partitions[0].ErrorCode, nil)
					case w.deleteOne:
						delete(committed, w.key)
						requireCode(t, "offset delete", w.deleteKey.require(t, "offset delete").Topics[0].Partitions[0].ErrorCode, nil)
					case w.wholeGroup:
						for key := range committed { // order-independent: deletes from a map
							if key.group == w.key.group {
								delete(committed, key)
							}
						}
						delete(deleting, w.key.group)
						requireCode(t, "group deletion", w.deleteGroup.require(t, "delete").Groups[0].ErrorCode, nil)
					}
				}
				pending = nil
			},
			"crash": func(rt *rapid.T) {
				// Every replica loses what was not committed; the
				// requests waiting for it are never answered.
				tc.log.loseUncommitted()
				tc.restart()
				pending = nil
				deleting = map[string]bool{}
			},
			"": func(rt *rapid.T) {
				for _, group := range []string{"g1", "g2", "g3"} {
					for partition := int32(0); partition <= 2; partition++ {
						want, ok := committed[modelKey{group, partition}]
						if !ok {
							want = -1
						}
						if got := tc.fetch(group, "orders", partition); got != want {
							t.Fatalf("%s orders-%d: fetched %d, model says %d", group, partition, got, want)
						}
					}
				}
				for _, w := range pending {
					if n := w.answered(); n != 0 {
						t.Fatalf("%s answered before the log committed it", w)
					}
				}
			},
		})
	})
}

// hasOffset reports whether the group has or is committing an offset
// for tp (what an OffsetDelete has to tombstone).
func (g *group) hasOffset(tp topicPartition) bool {
	_, committed := g.offsets[tp]
	return committed || g.pendingCommits[tp] > 0
}

func (w *modelWrite) answered() int {
	switch {
	case w.commit != nil:
		return w.commit.count
	case w.deleteKey != nil:
		return w.deleteKey.count
	default:
		return w.deleteGroup.count
	}
}

func (w *modelWrite) String() string {
	return fmt.Sprintf("write %+v", *w)
}
