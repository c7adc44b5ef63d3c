package core

// Canaries are deliberately planted bugs, each behind a name, that only the
// simulator can switch on. A canary the simulator fails to catch within its
// stated number of seeds shows a blind spot in the simulator, so the suite of
// canaries measures how strong the testing is. Production never sets them: a
// nil *Canaries reports every canary off.
type Canaries struct {
	on map[string]bool
}

// NewCanaries switches on the named canaries.
func NewCanaries(names ...string) *Canaries {
	c := &Canaries{on: map[string]bool{}}
	for _, name := range names {
		c.on[name] = true
	}
	return c
}

// On reports whether the named bug is planted in this run.
func (c *Canaries) On(name string) bool {
	return c != nil && c.on[name]
}
