// Package zview is smcdump's -z views (smc,conns smc,links smc,lgr
// smc,decline smc,timeline,CONN; smc,follow,CONN is package
// output/follow's, fed while the frames are): the tracker's typed rows (package track)
// as aligned text tables framed like tshark -z output, or as JSON written
// a row at a time. Tracker hooks a *track.Tracker into package output
// (output.Tracker), which knows the tracker only through that interface;
// NewTracker and NewTrackerKeeping make one with smcdump's retention
// (MaxClosed, -K).
package zview
