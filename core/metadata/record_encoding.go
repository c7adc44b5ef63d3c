package metadata

import "strconv"

// The leader encodes every record it proposes, and every snapshot encodes
// the whole image; encoding/json spends most of that time in reflection.
// appendEncoded writes json.Marshal's form of a record directly: fields in
// declaration order, no spaces, omitempty fields left out, byte arrays as
// arrays of numbers, nil slices as null. encoding/json stays the
// definition of the format: a string that json.Marshal would escape (or
// whose bytes are not plain ASCII) sends the whole record to it, and the
// tests check the two agree byte for byte.

// appendEncoded appends the encoding of r to b; ok is false (and what it
// returns unusable) when r has a string only encoding/json may write.
func appendEncoded(b []byte, r Record) (_ []byte, ok bool) {
	e := encodedWriter{b: b, ok: true}
	e.raw("{")
	first := true
	field := func(name string) {
		if !first {
			e.raw(",")
		}
		first = false
		e.raw(`"`)
		e.raw(name)
		e.raw(`":`)
	}
	if x := r.RegisterBroker; x != nil {
		field("register_broker")
		e.registerBroker(x)
	}
	if x := r.BrokerFence; x != nil {
		field("broker_fence")
		e.brokerFence(x)
	}
	if x := r.BrokerCaughtUp; x != nil {
		field("broker_caught_up")
		e.raw(`{"broker_id":`)
		e.integer(int64(x.BrokerID))
		e.raw(`,"broker_epoch":`)
		e.integer(x.BrokerEpoch)
		e.raw("}")
	}
	if x := r.Topic; x != nil {
		field("topic")
		e.topic(x)
	}
	if x := r.Partition; x != nil {
		field("partition")
		e.partition(x)
	}
	if x := r.PartitionChange; x != nil {
		field("partition_change")
		e.partitionChange(x)
	}
	if x := r.RemoveTopic; x != nil {
		field("remove_topic")
		e.raw(`{"topic_id":`)
		e.id(x.TopicID)
		e.raw("}")
	}
	if x := r.Config; x != nil {
		field("config")
		e.config(x)
	}
	if x := r.ProducerIDs; x != nil {
		field("producer_ids")
		e.raw(`{"broker_id":`)
		e.integer(int64(x.BrokerID))
		e.raw(`,"broker_epoch":`)
		e.integer(x.BrokerEpoch)
		e.raw(`,"next_producer_id":`)
		e.integer(x.NextProducerID)
		e.raw("}")
	}
	if r.NoOp != nil {
		field("no_op")
		e.raw("{}")
	}
	e.raw("}")
	return e.b, e.ok
}

func (e *encodedWriter) registerBroker(x *RegisterBrokerRecord) {
	e.raw(`{"broker_id":`)
	e.integer(int64(x.BrokerID))
	e.raw(`,"incarnation_id":`)
	e.id(x.IncarnationID)
	e.raw(`,"broker_epoch":`)
	e.integer(x.BrokerEpoch)
	e.raw(`,"host":`)
	e.string(x.Host)
	e.raw(`,"port":`)
	e.integer(int64(x.Port))
	if x.Rack != "" {
		e.raw(`,"rack":`)
		e.string(x.Rack)
	}
	e.raw("}")
}

func (e *encodedWriter) brokerFence(x *BrokerFenceRecord) {
	e.raw(`{"broker_id":`)
	e.integer(int64(x.BrokerID))
	e.raw(`,"broker_epoch":`)
	e.integer(x.BrokerEpoch)
	e.raw(`,"fenced":`)
	e.boolean(x.Fenced)
	e.raw("}")
}

func (e *encodedWriter) topic(x *TopicRecord) {
	e.raw(`{"name":`)
	e.string(x.Name)
	e.raw(`,"id":`)
	e.id(x.ID)
	e.raw("}")
}

func (e *encodedWriter) partition(x *PartitionRecord) {
	e.raw(`{"topic_id":`)
	e.id(x.TopicID)
	e.raw(`,"partition":`)
	e.integer(int64(x.Partition))
	e.raw(`,"replicas":`)
	e.int32s(x.Replicas)
	e.raw(`,"isr":`)
	e.int32s(x.ISR)
	e.raw(`,"leader":`)
	e.integer(int64(x.Leader))
	e.raw(`,"leader_epoch":`)
	e.integer(int64(x.LeaderEpoch))
	e.raw(`,"partition_epoch":`)
	e.integer(int64(x.PartitionEpoch))
	if x.UncleanEpoch != 0 {
		e.raw(`,"unclean_epoch":`)
		e.integer(int64(x.UncleanEpoch))
	}
	if len(x.AddingReplicas) > 0 {
		e.raw(`,"adding_replicas":`)
		e.int32s(x.AddingReplicas)
	}
	if len(x.RemovingReplicas) > 0 {
		e.raw(`,"removing_replicas":`)
		e.int32s(x.RemovingReplicas)
	}
	if len(x.Deposed) > 0 {
		e.raw(`,"deposed":`)
		e.int32s(x.Deposed)
	}
	e.raw("}")
}

func (e *encodedWriter) partitionChange(x *PartitionChangeRecord) {
	e.raw(`{"topic_id":`)
	e.id(x.TopicID)
	e.raw(`,"partition":`)
	e.integer(int64(x.Partition))
	if x.Leader != nil {
		e.raw(`,"leader":`)
		e.integer(int64(*x.Leader))
	}
	if len(x.ISR) > 0 {
		e.raw(`,"isr":`)
		e.int32s(x.ISR)
	}
	if len(x.Replicas) > 0 {
		e.raw(`,"replicas":`)
		e.int32s(x.Replicas)
	}
	if len(x.AddingReplicas) > 0 {
		e.raw(`,"adding_replicas":`)
		e.int32s(x.AddingReplicas)
	}
	if len(x.RemovingReplicas) > 0 {
		e.raw(`,"removing_replicas":`)
		e.int32s(x.RemovingReplicas)
	}
	if x.Unclean {
		e.raw(`,"unclean":true`)
	}
	e.raw("}")
}

func (e *encodedWriter) config(x *ConfigRecord) {
	e.raw(`{"resource_type":`)
	e.integer(int64(x.ResourceType))
	e.raw(`,"resource_name":`)
	e.string(x.ResourceName)
	e.raw(`,"name":`)
	e.string(x.Name)
	e.raw(`,"value":`)
	if x.Value == nil {
		e.raw("null")
	} else {
		e.string(*x.Value)
	}
	e.raw("}")
}

// encodedWriter appends the JSON values json.Marshal writes, in its form.
// ok turns false at a string it leaves to encoding/json.
type encodedWriter struct {
	b  []byte
	ok bool
}

func (e *encodedWriter) raw(s string) { e.b = append(e.b, s...) }

func (e *encodedWriter) integer(n int64) { e.b = strconv.AppendInt(e.b, n, 10) }

func (e *encodedWriter) boolean(v bool) { e.b = strconv.AppendBool(e.b, v) }

// id writes a [16]byte as encoding/json does: an array of sixteen numbers.
// Nearly every record has one, so the digits are written here rather than
// by strconv.
func (e *encodedWriter) id(id [16]byte) {
	b := append(e.b, '[')
	for i, v := range id {
		if i > 0 {
			b = append(b, ',')
		}
		switch {
		case v >= 100:
			b = append(b, '0'+v/100, '0'+v/10%10, '0'+v%10)
		case v >= 10:
			b = append(b, '0'+v/10, '0'+v%10)
		default:
			b = append(b, '0'+v)
		}
	}
	e.b = append(b, ']')
}

// int32s writes a []int32: nil is null, empty is [].
func (e *encodedWriter) int32s(values []int32) {
	if values == nil {
		e.raw("null")
		return
	}
	e.b = append(e.b, '[')
	for i, v := range values {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.b = strconv.AppendInt(e.b, int64(v), 10)
	}
	e.b = append(e.b, ']')
}

// string writes s quoted if json.Marshal writes it without escapes:
// printable ASCII other than the quote, the backslash and the three
// characters it escapes for HTML (<, >, &). Anything else is left to
// encoding/json.
func (e *encodedWriter) string(s string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			e.ok = false
			return
		}
	}
	e.b = append(e.b, '"')
	e.b = append(e.b, s...)
	e.b = append(e.b, '"')
}
