package net

import "sync"

// registry is the set of live connections of one Listener or Dialer: it
// enforces ConnectionsMax, counts the goroutines serving them, and closes
// them all at shutdown.
type registry struct {
	connectionsMax int
	queued         *queuedBytes

	mutex       sync.Mutex
	connections map[*connection]struct{} // guarded by mutex; only ever looked up or walked without order mattering
	closed      bool                     // guarded by mutex

	// goroutines counts every goroutine serving a connection. A
	// connection's first goroutine is added with it, under mutex, so that
	// no Add can race with close's Wait while the count is zero.
	goroutines sync.WaitGroup
}

func newRegistry(connectionsMax int, queuedBytesMax int64) *registry {
	return &registry{
		connectionsMax: connectionsMax,
		queued:         newQueuedBytes(queuedBytesMax),
		connections:    map[*connection]struct{}{},
	}
}

// add registers c and counts the goroutine that is about to serve it. It
// fails once the registry is closed or full.
func (r *registry) add(c *connection) error {
	r.mutex.Lock()
	defer r.mutex.Unlock()
	if r.closed {
		return ErrClosed
	}
	if len(r.connections) >= r.connectionsMax {
		return ErrTooManyConnections
	}
	if _, present := r.connections[c]; present {
		panic("net: a connection was registered twice")
	}
	r.connections[c] = struct{}{}
	r.goroutines.Add(1)
	return nil
}

// remove forgets c, freeing its place under ConnectionsMax. Its goroutines
// call it as they finish, before the last of them is done.
func (r *registry) remove(c *connection) {
	r.mutex.Lock()
	defer r.mutex.Unlock()
	if _, present := r.connections[c]; !present {
		panic("net: removing a connection that is not registered")
	}
	delete(r.connections, c)
}

// count returns how many connections are live.
func (r *registry) count() int {
	r.mutex.Lock()
	defer r.mutex.Unlock()
	return len(r.connections)
}

// shutdown refuses new connections and closes every live one without
// telling its handler. wait then waits for their goroutines.
func (r *registry) shutdown() {
	r.mutex.Lock()
	r.closed = true
	live := make([]*connection, 0, len(r.connections))
	for c := range r.connections {
		live = append(live, c)
	}
	r.mutex.Unlock()
	for _, c := range live {
		c.end(errClosedByOwner)
	}
	r.queued.close()
}

// wait waits until every goroutine serving a connection has returned. Call
// it after shutdown, so that none can start.
func (r *registry) wait() {
	r.goroutines.Wait()
}
