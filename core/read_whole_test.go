package core_test

import (
	"errors"
	"io/fs"
	"strings"
	"testing"

	"sluice/core"
	"sluice/sim/kernel"
	"sluice/sim/simdisk"
)

func TestReadWhole(t *testing.T) {
	k := kernel.NewKernel(1, nil)
	disk := simdisk.New(k, kernel.NewProcess("node"), kernel.NewRand(1, "disk"), simdisk.Faults{})
	f, err := disk.OpenFile("small", true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("node.id=3\n"), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()

	data, err := core.ReadWhole(disk, "small", 64)
	if err != nil || string(data) != "node.id=3\n" {
		t.Fatalf("ReadWhole = %q, %v; want the file's 10 bytes", data, err)
	}
	if _, err := core.ReadWhole(disk, "small", 9); !errors.Is(err, core.ErrTooBig) || !strings.Contains(err.Error(), "more than 9") {
		t.Fatalf("a file over the bound: err %v, want a refusal naming the bound", err)
	}
	if _, err := core.ReadWhole(disk, "missing", 64); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a missing file: err %v, want fs.ErrNotExist", err)
	}
}
