// Package wire turns Kafka request frames into kmsg values and kmsg responses
// back into frames: the request header (v0 to v2, with KIP-482 tagged
// fields), the body through franz-go's kmsg, and the response header.
//
// A frame here is what follows the 4-byte size prefix on a TCP connection;
// the real network (net/) strips and adds that prefix and enforces its upper
// bound, the simulated network carries frames whole. Everything here is a
// pure function, safe to call from any goroutine, so production can decode
// on the connection's goroutine and hand the event loop a finished Request.
//
// Start with DecodeRequest (request.go) and AppendResponse (response.go).
package wire
