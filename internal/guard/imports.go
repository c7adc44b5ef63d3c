package guard

import (
	"go/ast"
	"strconv"
	"strings"
)

// forbiddenImportTrees are packages core may not import, each with every
// package below it ("os" also forbids "os/exec"), and why.
var forbiddenImportTrees = []struct {
	path   string
	reason string
}{
	{"sync", "locks and atomics belong to multi-threaded code; core runs on one loop"},
	{"os", "touches the operating system; use World.FS"},
	{"net", "is the network (net/netip too: core names peers by node ID); use World.Net"},
	{"math/rand", "global randomness; use World.Entropy"},
	{"crypto/rand", "the OS's randomness; use World.Entropy"},
	{"hash/maphash", "seeds are random per process; use a fixed hash such as hash/fnv"},
	{"syscall", "talks to the kernel directly"},
	{"unsafe", "defeats the type system the checks rely on"},
	{"runtime", "scheduler, GC and finalizers are not deterministic"},
	{"weak", "weak pointers clear when the GC runs, which is not deterministic"},
	{"C", "cgo reaches outside Go"},
	{"io/ioutil", "reads and writes the OS's files; use World.FS"},
	{"path/filepath", "OS-specific separators and file system walks; use package path"},
	{"log/syslog", "writes to the system log over a socket; use World.Log"},
	{"plugin", "loads code from the OS at run time"},
	{"expvar", "process-global state served over HTTP"},
}

// importBan reports why core may not import path, if it may not.
func importBan(path string) (reason string, banned bool) {
	for _, tree := range forbiddenImportTrees {
		if path == tree.path || strings.HasPrefix(path, tree.path+"/") {
			return tree.reason, true
		}
	}
	return "", false
}

func (c *fileChecker) checkImport(spec *ast.ImportSpec) {
	path, err := strconv.Unquote(spec.Path.Value)
	if err != nil {
		panic("guard: type-checked file has a malformed import path " + spec.Path.Value)
	}
	if reason, banned := importBan(path); banned {
		c.report(spec.Pos(), RuleImport, "import of "+strconv.Quote(path)+": "+reason)
	}
}
