package broker

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"sluice/core"
)

// metaPropertiesName is Kafka's file naming a data directory's cluster and
// node, so a directory is never used for another cluster by mistake.
const metaPropertiesName = "meta.properties"

// metaPropertiesBytesMax bounds the file read.
const metaPropertiesBytesMax = 64 << 10

// loadOrCreateMetaProperties returns the cluster id recorded in the data
// directory, creating the file on first start with clusterID, or a new
// random id when clusterID is empty. A directory that belongs to another
// node id, or to another cluster than a non-empty clusterID, is refused.
func loadOrCreateMetaProperties(w core.World, nodeID int32, clusterID string) (id string, created bool, err error) {
	data, err := core.ReadWhole(w.FS, metaPropertiesName, metaPropertiesBytesMax)
	if errors.Is(err, fs.ErrNotExist) {
		id, err := createMetaProperties(w, nodeID, clusterID)
		return id, err == nil, err
	}
	if err != nil {
		return "", false, fmt.Errorf("broker: reading %s: %w", metaPropertiesName, err)
	}
	properties := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if ok {
			properties[strings.TrimSpace(key)] = strings.TrimSpace(value)
		}
	}
	if id, err := strconv.ParseInt(properties["node.id"], 10, 32); err != nil || int32(id) != nodeID {
		return "", false, fmt.Errorf("broker: the data directory belongs to node.id=%s, not %d", properties["node.id"], nodeID)
	}
	recorded := properties["cluster.id"]
	switch {
	case recorded == "":
		return "", false, fmt.Errorf("broker: %s has no cluster.id", metaPropertiesName)
	case clusterID != "" && recorded != clusterID:
		return "", false, fmt.Errorf("broker: the data directory belongs to cluster.id=%s, not %s (another cluster's voters)", recorded, clusterID)
	}
	return recorded, false, nil
}

func createMetaProperties(w core.World, nodeID int32, clusterID string) (string, error) {
	if clusterID == "" {
		var raw [16]byte
		for i := 0; i < len(raw); i += 8 {
			v := w.Entropy.Uint64()
			for j := 0; j < 8; j++ {
				raw[i+j] = byte(v >> (8 * j))
			}
		}
		// Kafka's cluster ids are URL-safe base64 UUIDs without padding.
		clusterID = base64.RawURLEncoding.EncodeToString(raw[:])
	}
	content := fmt.Sprintf("#\n#Written by Sluice\nversion=1\ncluster.id=%s\nnode.id=%d\n", clusterID, nodeID)
	temporary := metaPropertiesName + ".tmp"
	f, err := w.FS.OpenFile(temporary, true)
	if err != nil {
		return "", fmt.Errorf("broker: creating %s: %w", metaPropertiesName, err)
	}
	if err := f.Truncate(0); err != nil {
		f.Close()
		return "", fmt.Errorf("broker: writing %s: %w", metaPropertiesName, err)
	}
	if _, err := f.WriteAt([]byte(content), 0); err != nil {
		f.Close()
		return "", fmt.Errorf("broker: writing %s: %w", metaPropertiesName, err)
	}
	// The file becomes durable in the background. Should a crash lose it
	// first, the next start picks a new cluster id; the id is only a label
	// clients display, so nothing stored depends on it.
	f.Sync(func(err error) {
		f.Close()
		if err != nil {
			w.Halt(fmt.Errorf("broker: syncing %s: %w", metaPropertiesName, err))
			return
		}
		if err := w.FS.Rename(temporary, metaPropertiesName); err != nil {
			w.Halt(fmt.Errorf("broker: renaming %s: %w", metaPropertiesName, err))
			return
		}
		w.FS.SyncDir(".", func(err error) {
			if err != nil {
				w.Halt(fmt.Errorf("broker: syncing the data directory: %w", err))
			}
		})
	})
	return clusterID, nil
}
