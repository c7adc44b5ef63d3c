package simnet

// Stats counts what the network did, for a run's report. Counters only go up,
// except ConnectionsOpen, which is the number of connections alive now. Once
// nothing is in flight, FramesSent = FramesDelivered + FramesDropped.
type Stats struct {
	Dials         int64 // Dial calls
	DialsRefused  int64 // dials that found nobody listening
	DialsTimedOut int64 // dials whose handshake could not cross a cut in time
	Accepts       int64 // connections handed to an Acceptor

	FramesSent      int64 // data frames accepted by Send
	FramesDelivered int64 // data frames handed to a Handler
	BytesDelivered  int64 // bytes in those frames
	FramesDropped   int64 // data frames lost to a break, a crash or a closed receiver

	Resets            int64 // connections broken by ResetConnections or ResetRandomConnection
	DirectionsStalled int64 // times one direction of a connection was stalled by a cut
	StallBreaks       int64 // connections broken by Faults.StallBreakAfter
	Overflows         int64 // connections broken because a Send overfilled a direction
	Crashes           int64 // Endpoint.Crash calls

	ConnectionsOpen int // connections not yet over
}
