// Package metrics exports monitor snapshots to Prometheus: one collector
// per file, in the node_exporter style, all in the namespace smc_ with
// base units, _total counters and *_info gauges for joins. Labels are of
// low cardinality (side, reason, mode, device, port, link group) and never
// per socket: a host with 10 000 connections exports a few hundred series.
//
// Handler serves /metrics from its own registry (never the process-global
// one), refreshing the Monitor on each scrape or reading the newest
// snapshot a dashboard already made.
package metrics
