package metadata

import (
	"bytes"
	"unicode/utf8"
)

// Every node decodes every committed metadata record, and encoding/json
// spends most of that time in reflection. Record.Encode writes exactly one
// form of each record (json.Marshal's: fields in declaration order, no
// spaces, omitempty fields left out), so decodeEncoded reads that form
// directly and gives up at the first byte it does not expect. DecodeRecord
// then hands the bytes to encoding/json, which stays the definition of
// the format: the fast path is only ever a shortcut to the same Record
// (the tests check it against encoding/json on every input it accepts).

// decodeEncoded decodes b if it is exactly what Record.Encode writes for
// some record; ok is false otherwise.
func decodeEncoded(b []byte) (r Record, ok bool) {
	d := encodedReader{input: b, ok: true}
	switch {
	case d.skip(`{"partition_change":`):
		r.PartitionChange = d.partitionChange()
	case d.skip(`{"broker_fence":`):
		r.BrokerFence = d.brokerFence()
	case d.skip(`{"broker_caught_up":{"broker_id":`):
		r.BrokerCaughtUp = &BrokerCaughtUpRecord{BrokerID: d.int32()}
		d.expect(`,"broker_epoch":`)
		r.BrokerCaughtUp.BrokerEpoch = d.int64()
		d.expect(`}`)
	case d.skip(`{"partition":`):
		r.Partition = d.partition()
	case d.skip(`{"register_broker":`):
		r.RegisterBroker = d.registerBroker()
	case d.skip(`{"config":`):
		r.Config = d.config()
	case d.skip(`{"no_op":{}`):
		r.NoOp = &NoOpRecord{}
	case d.skip(`{"topic":`):
		r.Topic = d.topic()
	case d.skip(`{"producer_ids":`):
		r.ProducerIDs = d.producerIDs()
	case d.skip(`{"remove_topic":`):
		r.RemoveTopic = d.removeTopic()
	default:
		return Record{}, false
	}
	d.expect(`}`)
	if !d.ok || len(d.rest()) > 0 {
		return Record{}, false
	}
	if r.count() != 1 {
		panic("metadata: the encoded-form decoder set other than one record kind")
	}
	return r, true
}

// partitionChangeWithLeader holds a decoded change and its new leader in
// one allocation: nearly every change names a leader.
type partitionChangeWithLeader struct {
	change PartitionChangeRecord
	leader int32
}

func (d *encodedReader) partitionChange() *PartitionChangeRecord {
	both := &partitionChangeWithLeader{}
	c := &both.change
	d.expect(`{"topic_id":`)
	c.TopicID = d.id()
	d.expect(`,"partition":`)
	c.Partition = d.int32()
	if d.skip(`,"leader":`) {
		both.leader = d.int32()
		c.Leader = &both.leader
	}
	if d.skip(`,"isr":`) {
		c.ISR = d.int32s()
	}
	if d.skip(`,"replicas":`) {
		c.Replicas = d.int32s()
	}
	if d.skip(`,"adding_replicas":`) {
		c.AddingReplicas = d.int32s()
	}
	if d.skip(`,"removing_replicas":`) {
		c.RemovingReplicas = d.int32s()
	}
	c.Unclean = d.skip(`,"unclean":true`)
	d.expect(`}`)
	return c
}

func (d *encodedReader) brokerFence() *BrokerFenceRecord {
	f := &BrokerFenceRecord{}
	d.expect(`{"broker_id":`)
	f.BrokerID = d.int32()
	d.expect(`,"broker_epoch":`)
	f.BrokerEpoch = d.int64()
	d.expect(`,"fenced":`)
	f.Fenced = d.boolean()
	d.expect(`}`)
	return f
}

func (d *encodedReader) partition() *PartitionRecord {
	p := &PartitionRecord{}
	d.expect(`{"topic_id":`)
	p.TopicID = d.id()
	d.expect(`,"partition":`)
	p.Partition = d.int32()
	d.expect(`,"replicas":`)
	p.Replicas = d.int32s()
	d.expect(`,"isr":`)
	p.ISR = d.int32s()
	d.expect(`,"leader":`)
	p.Leader = d.int32()
	d.expect(`,"leader_epoch":`)
	p.LeaderEpoch = d.int32()
	d.expect(`,"partition_epoch":`)
	p.PartitionEpoch = d.int32()
	if d.skip(`,"unclean_epoch":`) {
		p.UncleanEpoch = d.int32()
	}
	if d.skip(`,"adding_replicas":`) {
		p.AddingReplicas = d.int32s()
	}
	if d.skip(`,"removing_replicas":`) {
		p.RemovingReplicas = d.int32s()
	}
	if d.skip(`,"deposed":`) {
		p.Deposed = d.int32s()
	}
	d.expect(`}`)
	return p
}

func (d *encodedReader) registerBroker() *RegisterBrokerRecord {
	b := &RegisterBrokerRecord{}
	d.expect(`{"broker_id":`)
	b.BrokerID = d.int32()
	d.expect(`,"incarnation_id":`)
	b.IncarnationID = d.id()
	d.expect(`,"broker_epoch":`)
	b.BrokerEpoch = d.int64()
	d.expect(`,"host":`)
	b.Host = d.string()
	d.expect(`,"port":`)
	b.Port = d.int32()
	if d.skip(`,"rack":`) {
		b.Rack = d.string()
	}
	d.expect(`}`)
	return b
}

func (d *encodedReader) config() *ConfigRecord {
	c := &ConfigRecord{}
	d.expect(`{"resource_type":`)
	c.ResourceType = int8(d.integer(8))
	d.expect(`,"resource_name":`)
	c.ResourceName = d.string()
	d.expect(`,"name":`)
	c.Name = d.string()
	d.expect(`,"value":`)
	if !d.skip(`null`) {
		value := d.string()
		c.Value = &value
	}
	d.expect(`}`)
	return c
}

func (d *encodedReader) topic() *TopicRecord {
	t := &TopicRecord{}
	d.expect(`{"name":`)
	t.Name = d.string()
	d.expect(`,"id":`)
	t.ID = d.id()
	d.expect(`}`)
	return t
}

func (d *encodedReader) producerIDs() *ProducerIDsRecord {
	p := &ProducerIDsRecord{}
	d.expect(`{"broker_id":`)
	p.BrokerID = d.int32()
	d.expect(`,"broker_epoch":`)
	p.BrokerEpoch = d.int64()
	d.expect(`,"next_producer_id":`)
	p.NextProducerID = d.int64()
	d.expect(`}`)
	return p
}

func (d *encodedReader) removeTopic() *RemoveTopicRecord {
	t := &RemoveTopicRecord{}
	d.expect(`{"topic_id":`)
	t.TopicID = d.id()
	d.expect(`}`)
	return t
}

// encodedReader reads the JSON values json.Marshal writes, in the one
// form it writes them. ok turns false at the first unexpected byte; from
// then on every read is a no-op returning a zero value, so a record
// decoder reads straight through and checks ok once at the end.
//
// It keeps a position in the input rather than re-slicing it: the reader
// lives on the stack, yet its methods write through a pointer, and every
// slice stored that way costs a write barrier while the GC runs.
type encodedReader struct {
	input    []byte
	position int
	ok       bool
}

// rest is the input not yet read.
func (d *encodedReader) rest() []byte { return d.input[d.position:] }

// skip consumes literal if the input goes on with it.
func (d *encodedReader) skip(literal string) bool {
	rest := d.rest()
	if !d.ok || len(rest) < len(literal) || string(rest[:len(literal)]) != literal {
		return false
	}
	d.position += len(literal)
	return true
}

// expect consumes literal, or fails.
func (d *encodedReader) expect(literal string) {
	if !d.skip(literal) {
		d.ok = false
	}
}

// integerDigitsMax is the most digits a decimal integer may have here:
// 19 digits always fit a uint64 accumulator, and hold any int64.
const integerDigitsMax = 19

// integer reads a decimal integer as strconv.AppendInt writes it (an
// optional minus, no leading zeros, no "-0") that fits a signed integer
// of the given bits.
func (d *encodedReader) integer(bits int) int64 {
	if !d.ok {
		return 0
	}
	negative := d.skip("-")
	rest := d.rest()
	digits := 0
	var magnitude uint64
	for digits < len(rest) && digits <= integerDigitsMax && '0' <= rest[digits] && rest[digits] <= '9' {
		magnitude = magnitude*10 + uint64(rest[digits]-'0')
		digits++
	}
	limit := uint64(1) << (bits - 1) // the magnitude of the most negative value
	switch {
	case digits == 0 || digits > integerDigitsMax,
		digits > 1 && rest[0] == '0',
		negative && magnitude == 0,
		negative && magnitude > limit,
		!negative && magnitude >= limit:
		d.ok = false
		return 0
	}
	d.position += digits
	if negative {
		return -int64(magnitude-1) - 1 // no overflow at the most negative value
	}
	return int64(magnitude)
}

func (d *encodedReader) int32() int32 { return int32(d.integer(32)) }
func (d *encodedReader) int64() int64 { return d.integer(64) }

func (d *encodedReader) boolean() bool {
	if d.skip("true") {
		return true
	}
	d.expect("false")
	return false
}

// id reads a [16]byte (a TopicID or an incarnation id), which encoding/json
// writes as an array of sixteen numbers.
func (d *encodedReader) id() [16]byte {
	var id [16]byte
	d.expect("[")
	for i := range id {
		if i > 0 {
			d.expect(",")
		}
		id[i] = d.byteValue()
	}
	d.expect("]")
	return id
}

// byteValue reads a number from 0 to 255 as strconv writes it: one to
// three digits, no leading zero. Nearly every record holds sixteen.
func (d *encodedReader) byteValue() byte {
	if !d.ok {
		return 0
	}
	rest := d.rest()
	value, digits := 0, 0
	for digits < len(rest) && digits < 4 && '0' <= rest[digits] && rest[digits] <= '9' {
		value = value*10 + int(rest[digits]-'0')
		digits++
	}
	if digits == 0 || digits > 3 || (digits > 1 && rest[0] == '0') || value > 255 {
		d.ok = false
		return 0
	}
	d.position += digits
	return byte(value)
}

// int32s reads a []int32: null is nil and [] is an empty slice, as
// encoding/json decodes them.
func (d *encodedReader) int32s() []int32 {
	if d.skip("null") {
		return nil
	}
	d.expect("[")
	if !d.ok {
		return nil
	}
	// One allocation of the right size: count the values up to the
	// closing bracket (a malformed list only makes the guess wrong).
	n := 0
	rest := d.rest()
	if end := bytes.IndexByte(rest, ']'); end > 0 {
		n = bytes.Count(rest[:end], []byte{','}) + 1
	}
	values := make([]int32, 0, n)
	for d.ok && !d.skip("]") {
		if len(values) > 0 {
			d.expect(",")
		}
		values = append(values, d.int32())
	}
	if !d.ok {
		return nil
	}
	return values
}

// string reads a string written without escapes: no backslash, no
// control character, valid UTF-8. Anything else (json.Marshal escapes
// quotes, control characters and <, >, &) is left to encoding/json.
func (d *encodedReader) string() string {
	if !d.ok || !d.skip(`"`) {
		d.ok = false
		return ""
	}
	rest := d.rest()
	for i, c := range rest {
		switch {
		case c == '"':
			s := rest[:i]
			if !utf8.Valid(s) {
				d.ok = false
				return ""
			}
			d.position += i + 1
			return string(s)
		case c == '\\' || c < 0x20:
			d.ok = false
			return ""
		}
	}
	d.ok = false
	return ""
}
