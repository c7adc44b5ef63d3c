package group

import (
	"bytes"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core"
)

// member is one member of a group: a consumer (or any client of the
// protocol) that joined with a member id.
type member struct {
	id string
	// instanceID is group.instance.id for a static member (KIP-345), nil
	// for a dynamic one.
	instanceID *string
	clientID   string
	clientHost string

	// Timeouts as the member asked for them, in Kafka's milliseconds
	// (they are persisted as such).
	rebalanceTimeoutMs int32
	sessionTimeoutMs   int32

	protocolType string
	// protocols are the protocols the member supports, in its order of
	// preference, each with its opaque metadata (a consumer's
	// subscription).
	protocols []protocol
	// assignment is what the leader assigned it in the last completed
	// SyncGroup: opaque bytes the coordinator only passes on.
	assignment []byte

	// isNew is set from the member's first JoinGroup until the rebalance
	// it joined completes: until then only newMemberJoinTimeout, not its
	// session timeout, can expire it.
	isNew bool

	// joinDone answers the member's parked JoinGroup; nil when it has
	// none. While set, the member is "awaiting join".
	joinDone func(*kmsg.JoinGroupResponse)
	// syncDone answers the member's parked SyncGroup; nil when none.
	syncDone func(*kmsg.SyncGroupResponse)

	// sessionTimer expires the member unless something (a heartbeat, a
	// completed join or sync, a commit) reschedules it first. It calls
	// sessionExpiry, made at the first schedule and kept (a member
	// heartbeats every few seconds), for sessionGroup, the group of the
	// latest schedule.
	sessionTimer  core.Timer
	sessionExpiry func()
	sessionGroup  *group
}

// protocol is one protocol a member supports: a name (an assignor such as
// "range" or "cooperative-sticky") and opaque metadata.
type protocol struct {
	name     string
	metadata []byte
}

// protocolsOf is the protocols a JoinGroup names, in the member's order
// of preference, each once.
func protocolsOf(request []kmsg.JoinGroupRequestProtocol) []protocol {
	protocols := make([]protocol, 0, len(request))
	named := make(map[string]bool, len(request))
	for _, p := range request {
		if named[p.Name] {
			// Named again: the member supports it once, with the
			// metadata of its first (most preferred) mention, as
			// Kafka counts a member's protocols as a set.
			continue
		}
		named[p.Name] = true
		protocols = append(protocols, protocol{name: p.Name, metadata: p.Metadata})
	}
	return protocols
}

// isStatic reports whether the member has a group.instance.id.
func (m *member) isStatic() bool { return m.instanceID != nil }

// awaitingJoin reports whether the member has a JoinGroup parked.
func (m *member) awaitingJoin() bool { return m.joinDone != nil }

// matches reports whether protocols are exactly the member's, names,
// order and metadata: a rejoin that changes nothing need not rebalance.
func (m *member) matches(protocols []protocol) bool {
	if len(protocols) != len(m.protocols) {
		return false
	}
	for i, p := range protocols {
		if p.name != m.protocols[i].name || !bytes.Equal(p.metadata, m.protocols[i].metadata) {
			return false
		}
	}
	return true
}

// metadata is the member's metadata for the named protocol (nil if it
// does not support it).
func (m *member) metadata(name string) []byte {
	for _, p := range m.protocols {
		if p.name == name {
			return p.metadata
		}
	}
	return nil
}

// vote is the member's most preferred protocol among candidates.
func (m *member) vote(candidates map[string]bool) string {
	for _, p := range m.protocols {
		if candidates[p.name] {
			return p.name
		}
	}
	panic(fmt.Sprintf("group: member %s supports none of the candidate protocols", m.id))
}

func (m *member) sessionTimeout() time.Duration {
	return time.Duration(m.sessionTimeoutMs) * time.Millisecond
}

func (m *member) rebalanceTimeout() time.Duration {
	return time.Duration(m.rebalanceTimeoutMs) * time.Millisecond
}

// stopSessionTimer cancels the member's expiry (it left, or the group was
// unloaded).
func (m *member) stopSessionTimer() {
	if m.sessionTimer != nil {
		m.sessionTimer.Stop()
		m.sessionTimer = nil
	}
}

// newMemberID makes a member id as Kafka does: the client id (or, for a
// static member, its instance id), a dash, and a random UUID — drawn from
// the node's entropy, so a seed replays the same ids.
func newMemberID(e core.Entropy, clientID string, instanceID *string) string {
	prefix := clientID
	if instanceID != nil {
		prefix = *instanceID
	}
	return prefix + "-" + randomUUID(e)
}

// randomUUID formats 16 random bytes as a version 4 UUID.
func randomUUID(e core.Entropy) string {
	var b [16]byte
	for i := 0; i < len(b); i += 8 {
		v := e.Uint64()
		for j := 0; j < 8; j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // RFC 4122 variant
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// sessionTimeoutOf converts Kafka's milliseconds.
func sessionTimeoutOf(milliseconds int32) time.Duration {
	return time.Duration(milliseconds) * time.Millisecond
}
