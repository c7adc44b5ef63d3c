package simdisk

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"

	"sluice/core"
	"sluice/sim/kernel"
)

// fileBytesMax bounds one file: the simulator keeps files in memory, and a
// write at an absurd offset should fail (as EFBIG does) rather than
// allocate it.
const fileBytesMax = 1 << 30

// nameElementBytesMax is the longest element of a name, as Linux file
// systems bound a file name (NAME_MAX): longer is refused, as the real disk
// refuses it with ENAMETOOLONG.
const nameElementBytesMax = 255

var (
	errInvalidName           = fmt.Errorf("%w: a name is a slash path relative to the disk root, without \"..\", \".\" elements, empty elements, elements longer than 255 bytes or a leading slash", fs.ErrInvalid)
	errRootEntry             = fmt.Errorf("%w: the disk root cannot be removed or renamed", fs.ErrInvalid)
	errRenameIntoItself      = fmt.Errorf("%w: a directory cannot move below itself", fs.ErrInvalid)
	errNegative              = fmt.Errorf("%w: negative offset or size", fs.ErrInvalid)
	errNotDirectory          = errors.New("not a directory")
	errIsDirectory           = errors.New("is a directory")
	errDirectoryNotEmpty     = errors.New("directory not empty")
	errFileTooLarge          = fmt.Errorf("file too large (simdisk holds at most %d bytes per file)", fileBytesMax)
	errSyncFailed            = errors.New("input/output error (simdisk injected an fsync failure; what it covered will not survive a crash)")
	errHandleFromBeforeCrash = fmt.Errorf("handle opened before a crash: %w", fs.ErrClosed)
)

// Disk is one machine's simulated disk. It outlives the machine's process:
// a crash keeps what was durable and voids everything else, including open
// handles and syncs in flight.
type Disk struct {
	kernel *kernel.Kernel
	owner  *kernel.Process
	rng    *rand.Rand
	faults Faults
	stats  Stats

	// inodes holds, at its number, every inode a current or durable
	// entry, a handle or a pending sync may still need; the others are
	// nil. Crash prunes the unreachable ones. It is a slice, not a map:
	// every name resolved looks up an inode per element, and numbers are
	// handed out in order from 1 (so len(inodes) == inodeNext). It costs
	// a pointer per inode a run creates, a few thousand.
	inodes     []*inode
	inodeNext  inodeNumber
	usage      int64 // sum of the sizes of live files
	namespace  namespaceLog
	generation uint64 // goes up at each Crash; voids older handles and completions

	// lastDirectory is the directory lastDirectoryName (not ".") last
	// resolved to, nil if none: core works a directory at a time (it
	// opens, writes and renames a partition's files, then syncs the
	// directory), and walking to the same directory again, a map lookup
	// per element of a name, was most of the cost of resolving one. A
	// directory's name stays valid until a directory entry is removed or
	// replaced, or a crash rebuilds the namespace; both empty the cache.
	lastDirectoryName string
	lastDirectory     *inode

	// spareCompletions are syncs' completions that have run, for the
	// next syncs to reuse (see syncCompletion).
	spareCompletions []*syncCompletion
}

var _ core.FS = (*Disk)(nil)

// New returns an empty disk whose sync completions are events owned by
// owner, drawing every random choice from rng. Faults must be valid (see
// Faults.Validate): a scenario passing nonsense is a bug in the simulator,
// so New panics on it.
func New(k *kernel.Kernel, owner *kernel.Process, rng *rand.Rand, faults Faults) *Disk {
	if k == nil || rng == nil {
		panic("simdisk: New needs a kernel and an rng")
	}
	d := &Disk{
		kernel:    k,
		owner:     owner,
		rng:       rng,
		inodes:    make([]*inode, rootInode),
		inodeNext: rootInode,
	}
	d.SetFaults(faults)
	root := d.newInode(true)
	root.links = 1 // the root is always named
	return d
}

// SetFaults replaces the faults from now on; syncs already in flight keep
// the latency and outcome they drew. It panics on invalid faults.
func (d *Disk) SetFaults(faults Faults) {
	if err := faults.Validate(); err != nil {
		panic(err)
	}
	d.faults = faults
}

// Faults are the faults in force.
func (d *Disk) Faults() Faults { return d.faults }

// Stats counts what the disk has injected so far.
func (d *Disk) Stats() Stats { return d.stats }

// Usage is the sum of the current sizes of live files: those with a name or
// an open handle. It is what CapacityBytes limits.
func (d *Disk) Usage() int64 { return d.usage }

// DurableFile returns the durable image of the file name resolves to
// through durable directory entries: what a crash without torn writes
// would leave there. It is for tests and checkers.
func (d *Disk) DurableFile(name string) ([]byte, bool) {
	if _, valid := checkName(name); !valid || name == "." {
		return nil, false
	}
	current := d.inode(rootInode)
	for rest := name; rest != ""; {
		var component string
		component, rest = firstElement(rest)
		if !current.directory {
			return nil, false
		}
		entry, ok := current.durableEntries[component]
		if !ok || entry.target == noInode {
			return nil, false
		}
		current = d.inode(entry.target)
	}
	if current.directory {
		return nil, false
	}
	return current.durableImage(), true
}

// newInode allocates an inode: an empty file or directory, named nowhere yet.
func (d *Disk) newInode(directory bool) *inode {
	return d.addInode(new(inode), directory)
}

// addInode makes in, a zero inode, an empty file or directory, named
// nowhere yet.
func (d *Disk) addInode(in *inode, directory bool) *inode {
	*in = inode{number: d.inodeNext, directory: directory, counted: !directory}
	if directory {
		in.entries = map[string]inodeNumber{}
		in.durableEntries = map[string]durableEntry{}
	}
	d.inodes = append(d.inodes, in)
	d.inodeNext++
	return in
}

// inode returns the inode numbered n, which must exist.
func (d *Disk) inode(n inodeNumber) *inode {
	if n >= inodeNumber(len(d.inodes)) || d.inodes[n] == nil {
		panic(fmt.Sprintf("simdisk: inode %d is named but does not exist", n))
	}
	return d.inodes[n]
}

// resized records that a file's current size went from oldSize to newSize.
func (d *Disk) resized(in *inode, oldSize, newSize int64) {
	if in.counted {
		d.usage += newSize - oldSize
	}
	if d.usage < 0 {
		panic(fmt.Sprintf("simdisk: usage went negative (%d)", d.usage))
	}
}

// settle stops counting a file that lost its last name and handle.
func (d *Disk) settle(in *inode) {
	if in.links < 0 || in.handles < 0 {
		panic(fmt.Sprintf("simdisk: inode %d has %d links and %d handles", in.number, in.links, in.handles))
	}
	if in.counted && !in.live() {
		d.resized(in, int64(len(in.data)), 0)
		in.counted = false
	}
}

// chance draws true with probability p, drawing nothing when p is 0 or 1 so
// that turning a fault off does not shift every later draw.
func (d *Disk) chance(p float64) bool {
	if p <= 0 {
		return false
	}
	if p >= 1 {
		return true
	}
	return d.rng.Float64() < p
}

// pathError is the error every namespace method returns, as os does.
func pathError(op, name string, err error) error {
	return &fs.PathError{Op: op, Path: name, Err: err}
}
