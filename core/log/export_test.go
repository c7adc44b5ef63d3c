package log

// SetCompactionBytesPerCall lowers how much one Compact call reads, so that
// tests can make a pass span many calls.
func SetCompactionBytesPerCall(l *Log, bytes int64) { l.compactionBytesPerCall = bytes }

// SyncDelayBuggifyMin and SyncDelayBuggifyMax bound the delay of the
// BUGGIFY site log-sync-delayed.
const (
	SyncDelayBuggifyMin = syncDelayBuggifyMin
	SyncDelayBuggifyMax = syncDelayBuggifyMax
)
