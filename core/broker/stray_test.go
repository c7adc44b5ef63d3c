package broker

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// A partition directory whose partition.metadata names another topic id
// (a deletion this disk never saw, or the file damaged) is set aside with
// its files, not deleted, and the partition starts afresh: Sluice deleted
// it, so one byte flipped in that file cost the partition's data.
func TestADirectoryHoldingAnotherTopicIDIsSetAsideNotDeleted(t *testing.T) {
	n := newTestNode(t, DefaultConfig())
	c := n.connect()
	c.createTopic("kept", 1)
	c.produce("kept", 0, "a", "b", "c")
	n.run(settleTime)

	// Another topic id in the file, as a damaged byte makes it.
	f, err := n.machine.Disk.OpenFile("kept-0/partition.metadata", false)
	if err != nil {
		t.Fatal(err)
	}
	size := int64(len("version: 0\ntopic_id: "))
	id := make([]byte, 1)
	if _, err := f.ReadAt(id, size); err != nil {
		t.Fatal(err)
	}
	id[0] = map[bool]byte{true: 'B', false: 'A'}[id[0] == 'A']
	if _, err := f.WriteAt(id, size); err != nil {
		t.Fatal(err)
	}
	synced := false
	f.Sync(func(err error) { synced = err == nil })
	n.run(settleTime)
	if !synced {
		t.Fatal("the damaged file did not sync")
	}

	n.restart()
	dirs := partitionDirectories(t, n, "kept")
	var aside string
	for _, dir := range dirs {
		if strings.HasPrefix(dir, "kept-0.") && strings.HasSuffix(dir, straySuffix) {
			aside = dir
		}
	}
	if aside == "" {
		t.Fatalf("no directory set aside: %v", dirs)
	}
	files, err := n.machine.Disk.ReadDir(aside)
	if err != nil || !containsLogSegment(files) {
		t.Fatalf("the set-aside directory %s holds %v (%v), want its segment still there", aside, files, err)
	}
	// The partition starts afresh under its own name and takes writes.
	if _, code := n.connect().tryProduce("kept", 0, "d"); code != 0 {
		t.Fatalf("produce after the restart: %v", kerr.ErrorForCode(code))
	}
}

func containsLogSegment(files []string) bool {
	for _, name := range files {
		if strings.HasSuffix(name, ".log") {
			return true
		}
	}
	return false
}
