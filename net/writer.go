package net

import (
	"encoding/binary"
	stdnet "net"
)

// writeBatchFramesMax bounds the frames one writev carries. Linux accepts
// at most 1024 buffers (IOV_MAX) per call and a frame takes two, its size
// prefix and its bytes; Go splits larger batches anyway, so this bounds the
// writer's own arrays rather than the syscall.
const writeBatchFramesMax = 512

// writeFrames writes queued frames, batch by batch, until the connection
// ends or, once closing, the queue is empty.
func (c *connection) writeFrames(socket stdnet.Conn) {
	batch := make([][]byte, 0, writeBatchFramesMax)
	headers := make([]byte, frameHeaderBytes*writeBatchFramesMax)
	vectors := make([][]byte, 0, 2*writeBatchFramesMax)
	for {
		var batchBytes int
		var more bool
		batch, batchBytes, more = c.nextBatch(batch[:0])
		if !more {
			return
		}
		vectors = vectors[:0]
		for i, frame := range batch {
			header := headers[i*frameHeaderBytes : (i+1)*frameHeaderBytes]
			// Send's bound (SendQueueBytesMax <= MaxInt32) keeps every
			// queued frame within the size prefix.
			binary.BigEndian.PutUint32(header, uint32(len(frame)))
			vectors = append(vectors, header)
			if len(frame) > 0 {
				vectors = append(vectors, frame)
			}
		}
		// One writev for the whole batch, where the platform has it.
		buffers := stdnet.Buffers(vectors)
		_, err := buffers.WriteTo(socket)
		// WriteTo consumed the slices; drop them so the frames can go.
		clear(vectors)
		clear(batch)
		if err != nil {
			c.end(err)
			return
		}
		c.noteActivity()
		c.batchWritten(batchBytes)
	}
}

// nextBatch waits for queued frames and moves up to writeBatchFramesMax of
// them into batch, returning them with their byte count (size prefixes
// included). It reports false when the writer should stop: the connection
// ended, or it was closing and everything is written (it then ends it).
func (c *connection) nextBatch(batch [][]byte) ([][]byte, int, bool) {
	c.mutex.Lock()
	for len(c.queue) == 0 && !c.ended && !c.closing {
		c.writerWake.Wait()
	}
	if c.ended {
		c.mutex.Unlock()
		return batch, 0, false
	}
	if len(c.queue) == 0 {
		// Closing, and the last batch is written.
		c.mutex.Unlock()
		c.end(errClosedByOwner)
		return batch, 0, false
	}
	count := min(len(c.queue), writeBatchFramesMax)
	batch = append(batch, c.queue[:count]...)
	clear(c.queue[:count])
	c.queue = c.queue[count:]
	c.mutex.Unlock()
	batchBytes := 0
	for _, frame := range batch {
		batchBytes += frameHeaderBytes + len(frame)
	}
	return batch, batchBytes, true
}

// batchWritten releases a written batch's bytes from the send queue bound.
func (c *connection) batchWritten(batchBytes int) {
	c.mutex.Lock()
	defer c.mutex.Unlock()
	c.queuedBytes -= batchBytes
	if c.queuedBytes < 0 {
		panic("net: the send queue counted fewer bytes than were written")
	}
}
