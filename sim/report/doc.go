// Package report writes one simulated run as a self-contained HTML page:
// what `sluice sim --seed S --report out.html` produces. The page has the
// run's verdict (the failing check, its detail, and the partition or group
// it names), a timeline per node and per client as inline SVG (crashes
// and restarts, pauses, partitions and cuts, disk and clock faults, who
// led each partition and the metadata quorum in which epoch, the phases),
// the client operations as a filterable table with the failing finding's
// operations marked, and porcupine's visualization of the failing
// partition's (or group's) history, embedded in an iframe's srcdoc. Every
// workload keeps a sim.Recording when asked; those without Kafka clients
// (log, quorum) have no operations or porcupine frame, and the timeline
// marks two leaders of one quorum epoch in red.
//
// What it must never do: fetch anything (no scripts, fonts or styles from
// a network; the page opens from a file on a machine without one), or
// judge the run itself: the verdict is the workload's, and the checker
// runs again only to find the failing finding's partition and operations
// and to draw porcupine's visualization.
//
// Start reading with Write (report.go); timeline.go draws the SVG,
// operations.go the table, verdict.go finds what failed.
package report
