package bench

import (
	"encoding/binary"
	"math/rand/v2"
	"sync"
	"time"
)

// A value the load generator sends starts with a stamp: the intended send
// time as nanoseconds since the run's epoch (big-endian int64), then the
// run's nonce (8 bytes). The stamp lets a consumer in the same process
// measure end-to-end latency on the same monotonic clock, and the nonce
// lets it ignore records an earlier run left in the topic. The rest of the
// value is random bytes, the same for every record of a run: payloads do
// not compress, so a codec cannot make one system look faster on
// artificially regular data.

// stampValue writes the stamp into the first StampBytes of value.
func stampValue(value []byte, sentAt time.Duration, nonce uint64) {
	binary.BigEndian.PutUint64(value[0:8], uint64(sentAt))
	binary.BigEndian.PutUint64(value[8:16], nonce)
}

// readStamp returns the intended send time written in value, and false
// if value is too short or carries another run's nonce.
func readStamp(value []byte, nonce uint64) (time.Duration, bool) {
	if len(value) < StampBytes || binary.BigEndian.Uint64(value[8:16]) != nonce {
		return 0, false
	}
	return time.Duration(binary.BigEndian.Uint64(value[0:8])), true
}

// valuePool recycles value buffers: a buffer goes back once the client
// has acknowledged (or failed) its record, and only the stamp changes
// between uses, so a run allocates about as many buffers as it keeps in
// flight instead of one per record.
type valuePool struct {
	pool sync.Pool
}

func newValuePool(recordBytes int, seed uint64) *valuePool {
	template := make([]byte, recordBytes)
	random := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	for i := range template {
		template[i] = byte(random.Uint32())
	}
	p := &valuePool{}
	p.pool.New = func() any {
		value := make([]byte, recordBytes)
		copy(value, template)
		return &value
	}
	return p
}

func (p *valuePool) get() *[]byte  { return p.pool.Get().(*[]byte) }
func (p *valuePool) put(v *[]byte) { p.pool.Put(v) }
