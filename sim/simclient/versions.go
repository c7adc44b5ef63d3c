package simclient

import "github.com/twmb/franz-go/pkg/kmsg"

// pinnedVersions are the request versions this client sends, by API key:
// the newest each of Sluice's handlers serves. A client that negotiated
// versions would hide a broker that stopped serving one; pinning makes that
// a loud failure (ErrUnsupportedVersion) instead. Group APIs are listed at
// the versions the group consumer (group_consumer.go) sends.
var pinnedVersions = map[int16]int16{
	0:  9,  // Produce
	1:  12, // Fetch (the last version naming topics, not topic ids)
	2:  7,  // ListOffsets
	3:  12, // Metadata
	8:  8,  // OffsetCommit
	9:  8,  // OffsetFetch
	10: 4,  // FindCoordinator
	11: 9,  // JoinGroup (9: a returning static leader may be told to skip the assignment, KIP-814)
	12: 4,  // Heartbeat
	13: 5,  // LeaveGroup
	14: 5,  // SyncGroup
	15: 5,  // DescribeGroups (a returning static leader learns what the assignment covers)
	18: 3,  // ApiVersions
	22: 4,  // InitProducerId
	37: 3,  // CreatePartitions (an operator's, as tests grow a topic)
}

// apiKeysPinnedMax bounds the API keys this client sends: every key in
// pinnedVersions is below it, so tables by key (pinnedByKey, a
// connection's served versions) are arrays of this length.
const apiKeysPinnedMax = 38

// pinnedByKey is pinnedVersions as an array by API key, -1 where none is
// pinned: every request looks its version up, and an index costs less
// than a map lookup.
var pinnedByKey = func() (byKey [apiKeysPinnedMax]int16) {
	for key := range byKey {
		byKey[key] = -1
	}
	for key, version := range pinnedVersions { // order-independent: each key sets its own entry
		if key < 0 || key >= apiKeysPinnedMax {
			panic("simclient: a pinned API key is not below apiKeysPinnedMax")
		}
		byKey[key] = version
	}
	return byKey
}()

// pinnedVersion is the version this client sends for req's API.
func pinnedVersion(req kmsg.Request) (int16, bool) {
	key := req.Key()
	if key < 0 || key >= apiKeysPinnedMax {
		return -1, false
	}
	version := pinnedByKey[key]
	return version, version >= 0 && version <= req.MaxVersion()
}
