package track

import (
	"fmt"
	"strings"
)

// ConnDetail says in a few words how a connection's handshake ended.
func ConnDetail(c *Conn) string {
	switch c.Outcome {
	case OutcomeFallback:
		fb := &c.Fallback
		if fb.Cause != CauseDecline && fb.Cause != CauseDeclineCut {
			return fb.Cause.String()
		}
		who := "client"
		if fb.By == DirS2C {
			who = "server"
		}
		code := "(its code cut by the snap length)"
		if fb.Cause == CauseDecline {
			code = fb.CodeText()
		}
		s := fmt.Sprintf("%s declined %s %s", who, code, fb.Stage)
		if fb.OutOfSync {
			s += " [out of sync]"
		}
		return s
	case OutcomeSMCR, OutcomeSMCD:
		s := "reused link group"
		if c.FirstContact {
			s = "first contact (new link group)"
		}
		switch {
		case c.Outcome == OutcomeSMCD && c.cutHeader && !c.ClientEP.Valid:
			s += "; Accept and Confirm cut by the snap length: SMC-D by their headers"
		case c.FirstContact && !c.cutHeader:
			// A whole Accept or Confirm said so.
		case !c.Inferred && !c.ServerEP.Valid && !c.ClientEP.Valid:
			// Placed by its CDCs (claimFirst): whether it made its group
			// was in the Accept, or its header (cutStep).
			by := ""
			switch {
			case c.clcCut && c.cutHeader:
				s += "; Accept and Confirm cut by the snap length: SMC-R by its CDCs"
			case c.clcCut:
				s = "Accept and Confirm cut by the snap length: SMC-R by its CDCs"
			case c.clcDamaged:
				by = "Accept or Confirm damaged in the capture: SMC-R by its CDCs"
			case len(c.CLCTypes) == 0:
				by = "CLC messages not in the capture: SMC-R by its CDCs"
			default:
				by = "Accept and Confirm not in the capture: SMC-R by its CDCs"
			}
			switch {
			case by != "" && c.reuseShown:
				// Its group was there before it (placeBlind).
				s = "reused link group; " + by
			case by != "":
				s = by
			}
		}
		switch {
		case c.LinkNotCaptured && c.Link == 0:
			s += "; no packet in the capture ties it to its link"
		case c.LinkNotCaptured:
			s += "; its RoCE traffic is not in the capture"
		}
		return s
	case OutcomeUnknown:
		return "joined mid-stream (from CDCs)"
	case OutcomeFailed:
		return c.Failure
	}
	if s := pendingDetail(c); s != "" {
		return s
	}
	var s string
	switch {
	case len(c.CLCTypes) > 0:
		s = "handshake incomplete after " + strings.TrimPrefix(clcName(c.CLCTypes[len(c.CLCTypes)-1]), "CLC ")
	case c.SeenSYNACK:
		s = "no CLC yet"
	default:
		s = "SYN only"
	}
	if c.Flow[0].FIN || c.Flow[1].FIN || c.Flow[0].RST || c.Flow[1].RST {
		s += "; TCP closed before the handshake finished"
	}
	return s
}

// CloseInfo says how each side ended a connection ("client closed,
// server FIN"), "" while both are open. A side of an SMC-R connection
// whose TCP sent its FIN, no close CDC of it followed, where the capture
// missed requests of its link since its last CDC, "close CDC not in the
// capture": Linux sends that CDC before the FIN (smc_close_active,
// smc_shutdown in net/smc/af_smc.c), so it is among them.
func CloseInfo(c *Conn) string {
	var parts []string
	for d := DirC2S; d <= DirS2C; d++ {
		f := &c.Flow[d]
		who := map[bool]string{false: "client", true: "server"}[d == DirS2C]
		if c.RolesUnknown {
			who = map[bool]string{false: "A", true: "B"}[d == DirS2C]
		}
		switch {
		case f.Aborted:
			parts = append(parts, who+" abort")
		case f.Closed:
			parts = append(parts, who+" closed")
		case f.DoneWriting:
			parts = append(parts, who+" done writing")
		case c.Outcome == OutcomeSMCR && f.finSentFrame != 0 && !f.RST && f.uncaptured:
			parts = append(parts, who+" close CDC not in the capture")
		}
		if f.RST {
			parts = append(parts, who+" RST")
		} else if f.FIN {
			parts = append(parts, who+" FIN")
		}
	}
	return strings.Join(parts, ", ")
}
