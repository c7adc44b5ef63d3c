package simdisk

import (
	"bytes"
	"errors"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"sluice/core"
	"sluice/sim/kernel"
)

// The model is deliberately dumb: it keeps every operation since the last
// crash with a state, and computes images by replaying them from scratch.
// The disk computes the same thing incrementally; the state machine test
// below requires them to agree after every step, and after crashes without
// tearing.

type operationState int

const (
	statePending operationState = iota
	stateDurable
	stateDropped
)

// modelFile is a file: its image after the last crash, and every operation
// since.
type modelFile struct {
	base       []byte
	operations []*modelFileOperation
}

type modelFileOperation struct {
	operation pendingOperation
	state     operationState
}

// image replays the operations that pass the filter onto the base.
func (f *modelFile) image(include func(operationState) bool) []byte {
	image := bytes.Clone(f.base)
	for _, op := range f.operations {
		if include(op.state) {
			image = applyPending(image, op.operation)
		}
	}
	return image
}

func (f *modelFile) current() []byte {
	return f.image(func(operationState) bool { return true })
}

func (f *modelFile) durable() []byte {
	return f.image(func(s operationState) bool { return s == stateDurable })
}

// modelNamespaceOperation sets names (to a file id, or -1 to remove them)
// and touches the directories of those names.
type modelNamespaceOperation struct {
	changes map[string]int
	order   []string // change order, for a rename's remove-then-add
	covered map[string]bool
	state   operationState
}

// modelDisk has two fixed directories, "." and "d", and four names.
type modelDisk struct {
	files      map[int]*modelFile
	fileNext   int
	base       map[string]int // the namespace after the last crash
	operations []*modelNamespaceOperation
}

var modelNames = []string{"a", "b", "d/a", "d/b"}

func directoryOf(name string) string {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		return name[:i]
	}
	return "."
}

func (m *modelDisk) namespace(include func(operationState) bool) map[string]int {
	names := map[string]int{}
	for name, id := range m.base {
		names[name] = id
	}
	for _, op := range m.operations {
		if !include(op.state) {
			continue
		}
		for _, name := range op.order {
			if id := op.changes[name]; id < 0 {
				delete(names, name)
			} else {
				names[name] = id
			}
		}
	}
	return names
}

func (m *modelDisk) currentNamespace() map[string]int {
	return m.namespace(func(operationState) bool { return true })
}

func (m *modelDisk) durableNamespace() map[string]int {
	return m.namespace(func(s operationState) bool { return s == stateDurable })
}

func (m *modelDisk) changeNamespace(order []string, changes map[string]int) {
	op := &modelNamespaceOperation{changes: changes, order: order, covered: map[string]bool{}}
	for _, name := range order {
		op.covered[directoryOf(name)] = false
	}
	m.operations = append(m.operations, op)
}

// syncedDirectory records a completed SyncDir that covered the first
// covers operations.
func (m *modelDisk) syncedDirectory(dir string, covers int, failed bool) {
	for _, op := range m.operations[:covers] {
		if _, touches := op.covered[dir]; !touches || op.state != statePending {
			continue
		}
		if failed {
			op.state = stateDropped
			continue
		}
		op.covered[dir] = true
		everywhere := true
		for _, covered := range op.covered {
			everywhere = everywhere && covered
		}
		if everywhere {
			op.state = stateDurable
		}
	}
}

// crash makes the durable state the whole state.
func (m *modelDisk) crash() {
	names := m.durableNamespace()
	files := map[int]*modelFile{}
	for _, id := range names {
		files[id] = &modelFile{base: m.files[id].durable()}
	}
	m.files, m.base, m.operations = files, names, nil
}

// modelStepsMin and modelStepsMax bound the actions of one test case.
const modelStepsMin, modelStepsMax = 100, 300

// diskMachine drives a Disk and the model side by side.
type diskMachine struct {
	disk    *Disk
	kernel  *kernel.Kernel
	process *kernel.Process
	model   *modelDisk
	handles map[int]core.File // one per model file, unlinked ones included
	stale   []core.File       // handles from before a crash
}

func (s *diskMachine) ids() []int {
	ids := make([]int, 0, len(s.handles))
	for id := range s.handles {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func (s *diskMachine) pickFile(t *rapid.T) (int, core.File) {
	ids := s.ids()
	if len(ids) == 0 {
		return -1, nil
	}
	id := rapid.SampledFrom(ids).Draw(t, "file")
	return id, s.handles[id]
}

func (s *diskMachine) Create(t *rapid.T) {
	name := rapid.SampledFrom(modelNames).Draw(t, "name")
	if _, exists := s.model.currentNamespace()[name]; exists {
		return
	}
	f, err := s.disk.OpenFile(name, true)
	if err != nil {
		t.Fatalf("OpenFile(%q, create) = %v", name, err)
	}
	id := s.model.fileNext
	s.model.fileNext++
	s.model.files[id] = &modelFile{}
	s.model.changeNamespace([]string{name}, map[string]int{name: id})
	s.handles[id] = f
}

func (s *diskMachine) Write(t *rapid.T) {
	id, f := s.pickFile(t)
	if f == nil {
		return
	}
	op := pendingOperation{
		offset: rapid.Int64Range(0, 20).Draw(t, "offset"),
		bytes:  rapid.SliceOfN(rapid.Byte(), 1, 8).Draw(t, "bytes"),
	}
	write(t, f, op.offset, string(op.bytes))
	file := s.model.files[id]
	file.operations = append(file.operations, &modelFileOperation{operation: op})
}

func (s *diskMachine) Truncate(t *rapid.T) {
	id, f := s.pickFile(t)
	if f == nil {
		return
	}
	op := pendingOperation{truncate: true, size: rapid.Int64Range(0, 24).Draw(t, "size")}
	if err := f.Truncate(op.size); err != nil {
		t.Fatalf("Truncate = %v", err)
	}
	file := s.model.files[id]
	file.operations = append(file.operations, &modelFileOperation{operation: op})
}

func (s *diskMachine) Sync(t *rapid.T) {
	id, f := s.pickFile(t)
	if f == nil {
		return
	}
	file := s.model.files[id]
	covers := len(file.operations)
	f.Sync(func(err error) {
		for _, op := range file.operations[:covers] {
			if op.state != statePending {
				continue
			}
			if err != nil {
				op.state = stateDropped
			} else {
				op.state = stateDurable
			}
		}
	})
}

func (s *diskMachine) SyncDir(t *rapid.T) {
	dir := rapid.SampledFrom([]string{".", "d"}).Draw(t, "dir")
	covers := len(s.model.operations)
	s.disk.SyncDir(dir, func(err error) { s.model.syncedDirectory(dir, covers, err != nil) })
}

func (s *diskMachine) Remove(t *rapid.T) {
	name := rapid.SampledFrom(modelNames).Draw(t, "name")
	if _, exists := s.model.currentNamespace()[name]; !exists {
		return
	}
	if err := s.disk.Remove(name); err != nil {
		t.Fatalf("Remove(%q) = %v", name, err)
	}
	s.model.changeNamespace([]string{name}, map[string]int{name: -1})
}

func (s *diskMachine) Rename(t *rapid.T) {
	from := rapid.SampledFrom(modelNames).Draw(t, "from")
	to := rapid.SampledFrom(modelNames).Draw(t, "to")
	current := s.model.currentNamespace()
	id, exists := current[from]
	if !exists || from == to {
		return
	}
	if err := s.disk.Rename(from, to); err != nil {
		t.Fatalf("Rename(%q, %q) = %v", from, to, err)
	}
	if target, ok := current[to]; ok && target == id {
		return // two names of one file (see rebuildNamespace): POSIX does nothing
	}
	s.model.changeNamespace([]string{from, to}, map[string]int{from: -1, to: id})
}

func (s *diskMachine) Step(t *rapid.T) {
	for range rapid.IntRange(1, 4).Draw(t, "events") {
		s.kernel.Step()
	}
}

func (s *diskMachine) Crash(t *rapid.T) {
	for _, f := range s.handles {
		s.stale = append(s.stale, f)
	}
	crash(s.disk, s.process)
	s.model.crash()
	s.handles = map[int]core.File{}
	for name, id := range s.model.base {
		f, err := s.disk.OpenFile(name, false)
		if err != nil {
			t.Fatalf("after a crash OpenFile(%q) = %v; the model kept it", name, err)
		}
		s.handles[id] = f
	}
}

// Check compares everything observable with the model.
func (s *diskMachine) Check(t *rapid.T) {
	for _, id := range s.ids() {
		want := s.model.files[id].current()
		size, err := s.handles[id].Size()
		if err != nil || size != int64(len(want)) {
			t.Fatalf("file %d: Size = %d, %v; model %d", id, size, err, len(want))
		}
		got := make([]byte, size)
		if n, err := s.handles[id].ReadAt(got, 0); n != len(got) {
			t.Fatalf("file %d: ReadAt = %d, %v", id, n, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("file %d = %q; model %q", id, got, want)
		}
	}
	current := s.model.currentNamespace()
	for _, dir := range []string{".", "d"} {
		var want []string
		if dir == "." {
			want = append(want, "d")
		}
		for name := range current {
			if directoryOf(name) == dir {
				want = append(want, name[strings.LastIndexByte(name, '/')+1:])
			}
		}
		slices.Sort(want)
		got, err := s.disk.ReadDir(dir)
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("ReadDir(%q) = %q, %v; model %q", dir, got, err, want)
		}
	}
	durable := s.model.durableNamespace()
	for _, name := range modelNames {
		got, ok := s.disk.DurableFile(name)
		id, want := durable[name]
		if ok != want {
			t.Fatalf("DurableFile(%q) exists = %v; model %v", name, ok, want)
		}
		if want && !bytes.Equal(got, s.model.files[id].durable()) {
			t.Fatalf("DurableFile(%q) = %q; model %q", name, got, s.model.files[id].durable())
		}
	}
	for _, f := range s.stale {
		if _, err := f.Size(); !errors.Is(err, fs.ErrClosed) {
			t.Fatalf("a handle from before a crash: Size = %v; want fs.ErrClosed", err)
		}
	}
	if usage := s.disk.Usage(); usage < 0 {
		t.Fatalf("Usage = %d", usage)
	}
}

func TestDiskAgainstModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		seed := rapid.Uint64().Draw(t, "seed")
		faults := Faults{
			SyncLatencyMax: 5 * time.Millisecond,
			SyncFailure:    rapid.SampledFrom([]float64{0, 0.3}).Draw(t, "syncFailure"),
		}
		k := kernel.NewKernel(seed, nil)
		process := kernel.NewProcess("node")
		d := New(k, process, kernel.NewRand(seed, "disk"), Faults{})
		// The directories exist durably before the test begins.
		if err := d.MkdirAll("d"); err != nil {
			t.Fatal(err)
		}
		mustSyncDirectory(t, k, d, ".")
		d.SetFaults(faults)
		machine := &diskMachine{
			disk:    d,
			kernel:  k,
			process: process,
			model:   &modelDisk{files: map[int]*modelFile{}, base: map[string]int{}},
			handles: map[int]core.File{},
		}
		// rapid's own Repeat stops at 30 steps by default; the namespace
		// bugs worth finding need longer runs of renames and syncs.
		actions := rapid.StateMachineActions(machine)
		names := make([]string, 0, len(actions))
		for name := range actions {
			if name != "" {
				names = append(names, name)
			}
		}
		slices.Sort(names)
		steps := rapid.IntRange(modelStepsMin, modelStepsMax).Draw(t, "steps")
		for range steps {
			actions[rapid.SampledFrom(names).Draw(t, "action")](t)
			machine.Check(t)
		}
	})
}
