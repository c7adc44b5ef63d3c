package simdisk

import (
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"unicode/utf8"

	"sluice/core"
)

// entryChange sets one directory entry: name in directory now names target,
// or nothing when target is noInode.
type entryChange struct {
	directory inodeNumber
	name      string
	target    inodeNumber
}

// namespaceOperation is one create, remove, rename or mkdir: its entry
// changes become durable together, once each directory it touches has had a
// SyncDir that began after it complete.
//
// Its changes and directories are kept in the operation, not in slices of
// their own, and the log holds operations by value: an operation makes at
// most namespaceChangesMax changes, and each create, remove and rename
// used to cost three allocations for them.
type namespaceOperation struct {
	sequence    uint64
	changes     [namespaceChangesMax]entryChange // changes[:changeCount] are set
	changeCount int
	// directories[:directoryCount] are the directories touched,
	// ascending, without repeats; covered is parallel to them.
	directories    [namespaceChangesMax]inodeNumber
	covered        [namespaceChangesMax]bool
	directoryCount int
	dropped        bool // a failed SyncDir covered it: it will never be durable
}

// namespaceChangesMax is the most entry changes one namespace operation
// makes: a rename's two.
const namespaceChangesMax = 2

// fullyCovered reports whether every directory the operation touches has
// been synced since.
func (op *namespaceOperation) fullyCovered() bool {
	for _, covered := range op.covered[:op.directoryCount] {
		if !covered {
			return false
		}
	}
	return true
}

// namespaceLog is the namespace operations not yet durable, in issue order.
type namespaceLog struct {
	issued  uint64 // the sequence number of the next operation; starts at 1
	pending []namespaceOperation
}

// firstElement splits a valid name into its first element and the rest of
// it, empty after the last element. Names are walked with it, element by
// element, rather than split into a slice or through an iterator: every
// file operation resolves its name.
func firstElement(name string) (element, rest string) {
	element, rest, _ = strings.Cut(name, "/")
	return element, rest
}

// lookup resolves a valid name through the current namespace.
func (d *Disk) lookup(op, name string) (*inode, error) {
	if d.lastDirectory != nil && name == d.lastDirectoryName {
		return d.lastDirectory, nil
	}
	if _, valid := checkName(name); !valid {
		return nil, pathError(op, name, errInvalidName)
	}
	in, err := d.walk(name)
	if err != nil {
		return nil, pathError(op, name, err)
	}
	if in.directory && name != "." {
		d.lastDirectoryName, d.lastDirectory = name, in
	}
	return in, nil
}

// validElement reports whether element, which holds no slash, may be an
// element of a name (see checkName).
func validElement(element string) bool {
	return element != "" && element != "." && element != ".." && utf8.ValidString(element)
}

// checkName is fs.ValidPath(name), and also returns the index of name's
// last slash (-1 if none) for lookupParent. It finds each element with
// strings.IndexByte rather than a byte at a time, as ValidPath and
// LastIndexByte each did for every name a file operation resolves.
func checkName(name string) (lastSlash int, valid bool) {
	if !utf8.ValidString(name) {
		return -1, false
	}
	if name == "." {
		return -1, true
	}
	lastSlash = -1
	for rest, offset := name, 0; ; {
		element, i := rest, strings.IndexByte(rest, '/')
		if i >= 0 {
			element = rest[:i]
		}
		if element == "" || element == "." || element == ".." || len(element) > nameElementBytesMax {
			return -1, false
		}
		if i < 0 {
			return lastSlash, true
		}
		lastSlash = offset + i
		offset += i + 1
		rest = rest[i+1:]
	}
}

// walk resolves a name already checked to be valid, and returns the bare
// error (errNotDirectory or fs.ErrNotExist) for its caller to name the
// path it was asked about. lookupParent walks the parent of a name it has
// checked, which need not be checked again.
func (d *Disk) walk(name string) (*inode, error) {
	current := d.inode(rootInode)
	if name == "." {
		return current, nil
	}
	for rest := name; rest != ""; {
		var component string
		component, rest = firstElement(rest)
		if !current.directory {
			return nil, errNotDirectory
		}
		next, ok := current.entries[component]
		if !ok {
			return nil, fs.ErrNotExist
		}
		current = d.inode(next)
	}
	return current, nil
}

// lookupParent resolves the directory that holds (or would hold) name's
// entry, and returns it with the entry's name. The root has no parent.
func (d *Disk) lookupParent(op, name string) (*inode, string, error) {
	// A name in the last directory resolved needs only its last element
	// checked: the rest was checked and resolved then.
	if i := strings.LastIndexByte(name, '/'); i >= 0 && d.lastDirectory != nil && name[:i] == d.lastDirectoryName {
		if base := name[i+1:]; validElement(base) {
			return d.lastDirectory, base, nil
		}
	}
	lastSlash, valid := checkName(name)
	if !valid {
		return nil, "", pathError(op, name, errInvalidName)
	}
	if name == "." {
		return nil, "", pathError(op, name, errRootEntry)
	}
	parentName, base := ".", name
	if lastSlash >= 0 {
		parentName, base = name[:lastSlash], name[lastSlash+1:]
	}
	parent, err := d.walk(parentName)
	if err != nil {
		return nil, "", pathError(op, name, err)
	}
	if !parent.directory {
		return nil, "", pathError(op, name, errNotDirectory)
	}
	if lastSlash >= 0 {
		d.lastDirectoryName, d.lastDirectory = parentName, parent
	}
	return parent, base, nil
}

// forgetLastDirectory empties the cache of the last directory resolved
// (see Disk.lastDirectory): a directory left its name, or the namespace was
// rebuilt.
func (d *Disk) forgetLastDirectory() {
	d.lastDirectoryName, d.lastDirectory = "", nil
}

// changeNamespace applies entry changes to the current namespace and logs
// them as one pending operation.
func (d *Disk) changeNamespace(changes ...entryChange) {
	if len(changes) > namespaceChangesMax {
		panic(fmt.Sprintf("simdisk: a namespace operation of %d changes; at most %d", len(changes), namespaceChangesMax))
	}
	var replacedInline [namespaceChangesMax]*inode
	replaced := replacedInline[:0]
	for _, change := range changes {
		directory := d.inode(change.directory)
		old, existed := directory.entries[change.name]
		if existed {
			oldInode := d.inode(old)
			oldInode.links--
			replaced = append(replaced, oldInode)
			if oldInode.directory {
				d.forgetLastDirectory() // a directory removed, renamed or replaced
			}
		}
		if change.target == noInode {
			delete(directory.entries, change.name)
		} else {
			directory.entries[change.name] = change.target
			d.inode(change.target).links++
		}
		if named := change.target != noInode; named != existed {
			directory.renamed(change.name, named)
		}
	}
	// Settle after every change: a rename unlinks and relinks its inode.
	for _, in := range replaced {
		d.settle(in)
	}

	d.namespace.issued++
	d.namespace.pending = append(d.namespace.pending, namespaceOperation{sequence: d.namespace.issued})
	op := &d.namespace.pending[len(d.namespace.pending)-1]
	op.changeCount = copy(op.changes[:], changes)
	for _, change := range changes {
		if !slices.Contains(op.directories[:op.directoryCount], change.directory) {
			op.directories[op.directoryCount] = change.directory
			op.directoryCount++
		}
	}
	slices.Sort(op.directories[:op.directoryCount])
}

// renamed adds name to a directory's sorted names, or takes it out.
func (directory *inode) renamed(name string, named bool) {
	i, found := slices.BinarySearch(directory.names, name)
	switch {
	case named && !found:
		directory.names = slices.Insert(directory.names, i, name)
	case !named && found:
		directory.names = slices.Delete(directory.names, i, i+1)
	default:
		panic(fmt.Sprintf("simdisk: directory %d's names and entries disagree on %q", directory.number, name))
	}
}

// applyDurably writes an operation's changes to the durable entries. A
// change older than what an entry already holds is skipped: the newer
// operation reached the media first and the older one cannot undo it.
func (d *Disk) applyDurably(op *namespaceOperation) {
	for _, change := range op.changes[:op.changeCount] {
		directory := d.inode(change.directory)
		if !directory.directory {
			panic(fmt.Sprintf("simdisk: namespace operation %d changes an entry of file inode %d", op.sequence, change.directory))
		}
		if existing, ok := directory.durableEntries[change.name]; ok && existing.sequence > op.sequence {
			continue
		}
		directory.durableEntries[change.name] = durableEntry{target: change.target, sequence: op.sequence}
	}
}

// OpenFile implements core.FS.
func (d *Disk) OpenFile(name string, create bool) (core.File, error) {
	if name == "." {
		return nil, pathError("open", name, errIsDirectory)
	}
	parent, base, err := d.lookupParent("open", name)
	if err != nil {
		return nil, err
	}
	var in *inode
	var f *File
	if existing, ok := parent.entries[base]; ok {
		in = d.inode(existing)
		if in.directory {
			return nil, pathError("open", name, errIsDirectory)
		}
		f = new(File)
	} else {
		if !create {
			return nil, pathError("open", name, fs.ErrNotExist)
		}
		// A file created is opened at once: its inode, its first
		// handle and room for its first operations (see File.record)
		// come in one allocation, where they took three.
		created := new(struct {
			inode   inode
			handle  File
			pending [2]fileOperation
		})
		in, f = d.addInode(&created.inode, false), &created.handle
		in.pending = created.pending[:0]
		d.changeNamespace(entryChange{directory: parent.number, name: base, target: in.number})
	}
	in.handles++
	*f = File{disk: d, inode: in, name: name, generation: d.generation}
	return f, nil
}

// ReadDir implements core.FS.
func (d *Disk) ReadDir(dir string) ([]string, error) {
	directory, err := d.lookup("readdir", dir)
	if err != nil {
		return nil, err
	}
	if !directory.directory {
		return nil, pathError("readdir", dir, errNotDirectory)
	}
	return append(make([]string, 0, len(directory.names)), directory.names...), nil
}

// MkdirAll implements core.FS. Each directory it creates is a namespace
// operation on its parent.
func (d *Disk) MkdirAll(dir string) error {
	if _, valid := checkName(dir); !valid {
		return pathError("mkdir", dir, errInvalidName)
	}
	current := d.inode(rootInode)
	if dir == "." {
		return nil
	}
	for rest := dir; rest != ""; {
		var component string
		component, rest = firstElement(rest)
		if !current.directory {
			return pathError("mkdir", dir, errNotDirectory)
		}
		if next, ok := current.entries[component]; ok {
			current = d.inode(next)
			continue
		}
		created := d.newInode(true)
		d.changeNamespace(entryChange{directory: current.number, name: component, target: created.number})
		current = created
	}
	if !current.directory {
		return pathError("mkdir", dir, errNotDirectory)
	}
	return nil
}

// Remove implements core.FS.
func (d *Disk) Remove(name string) error {
	parent, base, err := d.lookupParent("remove", name)
	if err != nil {
		return err
	}
	target, ok := parent.entries[base]
	if !ok {
		return pathError("remove", name, fs.ErrNotExist)
	}
	if in := d.inode(target); in.directory && len(in.entries) > 0 {
		return pathError("remove", name, errDirectoryNotEmpty)
	}
	d.changeNamespace(entryChange{directory: parent.number, name: base, target: noInode})
	return nil
}

// Rename implements core.FS, with POSIX rename's rules: a file may replace
// a file, a directory may replace an empty directory, and a directory may
// not move below itself.
func (d *Disk) Rename(from, to string) error {
	fromParent, fromBase, err := d.lookupParent("rename", from)
	if err != nil {
		return err
	}
	toParent, toBase, err := d.lookupParent("rename", to)
	if err != nil {
		return err
	}
	sourceNumber, ok := fromParent.entries[fromBase]
	if !ok {
		return pathError("rename", from, fs.ErrNotExist)
	}
	source := d.inode(sourceNumber)
	if source.directory && strings.HasPrefix(to, from+"/") {
		return pathError("rename", to, errRenameIntoItself)
	}
	if existingNumber, ok := toParent.entries[toBase]; ok {
		if existingNumber == sourceNumber {
			return nil // the same entry, or two names of one file: nothing to do
		}
		existing := d.inode(existingNumber)
		switch {
		case source.directory && !existing.directory:
			return pathError("rename", to, errNotDirectory)
		case !source.directory && existing.directory:
			return pathError("rename", to, errIsDirectory)
		case existing.directory && len(existing.entries) > 0:
			return pathError("rename", to, errDirectoryNotEmpty)
		}
	}
	d.changeNamespace(
		entryChange{directory: fromParent.number, name: fromBase, target: noInode},
		entryChange{directory: toParent.number, name: toBase, target: sourceNumber},
	)
	return nil
}
