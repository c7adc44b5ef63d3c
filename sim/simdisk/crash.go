package simdisk

import (
	"fmt"
	"slices"
)

// Crash is a power cut: what was durable stays, the rest is lost or torn
// (see the package comment). Afterwards the current state is the durable
// state, nothing is pending, syncs in flight will never complete, and every
// handle opened before returns errors. The machine calls it when its
// process crashes; tests call it directly.
func (d *Disk) Crash() {
	d.stats.Crashes++
	d.forgetLastDirectory()
	torn := d.keepPendingNamespace()
	reachable := d.rebuildNamespace()
	for _, in := range reachable {
		if !in.directory && d.keepPendingWrites(in) {
			torn = true
		}
	}
	d.forgetUnreachable(reachable)
	clear(d.namespace.pending)
	d.namespace.pending = d.namespace.pending[:0]
	d.generation++
	if torn {
		d.stats.CrashesTorn++
	}
}

// keepPendingNamespace lets, with chance TornWrite, a random prefix of the
// pending namespace operations reach the media, in issue order. It reports
// whether any did.
func (d *Disk) keepPendingNamespace() bool {
	pending := d.namespace.pending
	if len(pending) == 0 || !d.chance(d.faults.TornWrite) {
		return false
	}
	kept := d.rng.IntN(len(pending) + 1)
	for i := range pending[:kept] {
		d.applyDurably(&pending[i])
	}
	return kept > 0
}

// rebuildNamespace makes the durable entries current. It walks the durable
// tree from the root, names in sorted order, and keeps only what it reaches:
// an inode whose entry never became durable is gone, and so is all below it.
// It returns the reachable inodes in walk order, root first, each once.
//
// One inode can be reached by two names when directories were synced
// unevenly: rename a to d/a, rename d/a to d/b, sync only d, and both the
// root's old entry a and d's new entry d/b are durable, as the contract
// promises for each directory synced. A file keeps both names, as hard
// links. A directory keeps only its first, since a directory with two
// parents would no longer be a tree.
func (d *Disk) rebuildNamespace() []*inode {
	root := d.inode(rootInode)
	reachable := []*inode{root}
	seen := map[inodeNumber]bool{rootInode: true}
	for i := 0; i < len(reachable); i++ {
		directory := reachable[i]
		if !directory.directory {
			continue
		}
		names := make([]string, 0, len(directory.durableEntries))
		for name := range directory.durableEntries {
			names = append(names, name)
		}
		slices.Sort(names)
		entries := map[string]inodeNumber{}
		durable := map[string]durableEntry{}
		current := names[:0] // the names kept, still sorted
		for _, name := range names {
			target := directory.durableEntries[name].target
			if target == noInode {
				continue
			}
			if child := d.inode(target); !seen[target] {
				seen[target] = true
				reachable = append(reachable, child)
			} else if child.directory {
				continue
			}
			entries[name] = target
			durable[name] = durableEntry{target: target}
			current = append(current, name)
		}
		directory.entries = entries
		directory.durableEntries = durable
		directory.names = current
	}
	return reachable
}

// keepPendingWrites builds the file's image after the crash: its durable
// image plus, with chance TornWrite, a random prefix of its pending
// operations, the last of which may be torn. It reports whether anything
// pending was kept.
func (d *Disk) keepPendingWrites(in *inode) bool {
	pending := in.pending
	kept := 0
	if len(pending) > 0 && d.chance(d.faults.TornWrite) {
		kept = d.rng.IntN(len(pending) + 1)
	}
	// The current image is lost: when the durable image is implied, it
	// is undone into it in place.
	image := in.durableData
	if !in.durableApart {
		image = in.undoPending(in.data, 0, kept)
	}
	for i := range pending[:kept] {
		op := &pending[i]
		if i == kept-1 && !op.truncate && d.rng.IntN(2) == 0 {
			image = d.tearWrite(image, op)
			continue
		}
		image = op.applyTo(image)
	}
	in.data = image
	in.durableApart, in.durableData = false, nil
	in.pending = nil
	in.operationsIssued = 0
	return kept > 0
}

// tearWrite applies only a prefix of a write's bytes. The rest of its range
// is either absent (the file ends where the prefix does, if the write was
// extending it) or zeros (the size reached the media, the data blocks did
// not; inside the old size the old bytes remain).
func (d *Disk) tearWrite(image []byte, op *fileOperation) []byte {
	d.stats.WritesTorn++
	prefix := d.rng.IntN(len(op.bytes)) // strictly fewer bytes than written
	oldSize := int64(len(image))
	end := op.offset + int64(prefix)
	if zeros := d.rng.IntN(2) == 0; zeros {
		end = op.offset + int64(len(op.bytes))
	}
	if prefix == 0 && end == op.offset {
		return image // nothing of the write reached the media
	}
	image = resize(image, max(oldSize, end))
	copy(image[op.offset:], op.bytes[:prefix])
	return image
}

// forgetUnreachable drops inodes the crash left without a name, resets the
// counts of the rest and recomputes usage from what survived.
func (d *Disk) forgetUnreachable(reachable []*inode) {
	clear(d.inodes)
	for _, in := range reachable {
		d.inodes[in.number] = in
		in.links = 0
		in.handles = 0
		in.lastCompletionAt = 0
	}
	d.usage = 0
	for _, in := range reachable {
		if in.directory {
			for _, target := range in.entries {
				d.inode(target).links++
			}
		}
	}
	d.inode(rootInode).links = 1
	for _, in := range reachable {
		if !in.live() {
			panic(fmt.Sprintf("simdisk: inode %d survived a crash without a name", in.number))
		}
		in.counted = !in.directory
		if in.counted {
			d.usage += int64(len(in.data))
		}
	}
}
