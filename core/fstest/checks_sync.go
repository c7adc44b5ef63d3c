package fstest

import (
	"fmt"
	"testing"
)

// syncCount is how many syncs the sync checks issue back to back: enough
// for several to be in flight together.
const syncCount = 5

func checkSyncCallsBackOnceLater(t *testing.T, h Harness) {
	f := create(t, h.FS, "log")
	defer closeFile(t, f)
	recorders := make([]*callbackRecorder, syncCount)
	for i := range recorders {
		writeAt(t, f, []byte{byte('a' + i)}, int64(i))
		recorders[i] = &callbackRecorder{}
		f.Sync(recorders[i].done)
		recorders[i].expectNotYet(t, fmt.Sprintf("Sync #%d", i))
	}
	h.Drain()
	h.Drain() // a second drain must not call anything again
	for i, r := range recorders {
		if err := r.expectOnce(t, fmt.Sprintf("Sync #%d", i)); err != nil {
			t.Fatalf("Sync #%d = %v; want success", i, err)
		}
	}
	expectContents(t, f, []byte("abcde"))
}

func checkSyncDirCallsBackOnceLater(t *testing.T, h Harness) {
	if err := h.FS.MkdirAll("topic/partition"); err != nil {
		t.Fatalf("MkdirAll = %v", err)
	}
	writeFile(t, h.FS, "topic/partition/log", "x")
	directories := []string{".", "topic", "topic/partition", "topic/partition"}
	recorders := make([]*callbackRecorder, len(directories))
	for i, dir := range directories {
		recorders[i] = &callbackRecorder{}
		h.FS.SyncDir(dir, recorders[i].done)
		recorders[i].expectNotYet(t, fmt.Sprintf("SyncDir(%q)", dir))
	}
	h.Drain()
	h.Drain()
	for i, r := range recorders {
		if err := r.expectOnce(t, fmt.Sprintf("SyncDir(%q)", directories[i])); err != nil {
			t.Fatalf("SyncDir(%q) = %v; want success", directories[i], err)
		}
	}
}

func checkSyncDirMissing(t *testing.T, h Harness) {
	var r callbackRecorder
	h.FS.SyncDir("missing", r.done)
	r.expectNotYet(t, `SyncDir("missing")`)
	h.Drain()
	expectNotExist(t, `SyncDir("missing")`, r.expectOnce(t, `SyncDir("missing")`))
}
