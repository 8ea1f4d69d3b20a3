package browser

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/rivo/tview"
)

// defaultExport is the export file when -w is not given.
const defaultExport = "smcdump-export.pcapng"

// openExport asks where to write the list's frames (or the marked ones):
// the -w file, or the first free name after it (FILE-2.pcapng, ...), so
// that an earlier export is not overwritten unless the user says so.
func (b *Browser) openExport(marked bool) {
	ns := b.exportFrames(marked)
	if len(ns) == 0 {
		if marked {
			b.message = "[yellow]no marked frames (m marks one)[-]"
		} else {
			b.message = "[yellow]the list is empty: nothing to write[-]"
		}
		return
	}
	b.exportMarked, b.confirm = marked, ""
	name := b.opts.Write
	if name == "" {
		name = defaultExport
	}
	b.openPrompt(promptWrite, freeName(name))
	what := "the list's"
	if marked {
		what = "the marked"
	}
	b.setHint(fmt.Sprintf("[gray]writing %s %d frames (%s; a name ending .pcap writes pcap, .csv the list's columns, else pcapng)[-]", what, len(ns), b.mode))
}

// exportFrames are the frames w (the list) or W (the marked ones) writes,
// in capture order.
func (b *Browser) exportFrames(marked bool) []int32 {
	var ns []int32
	if marked {
		for n := range b.marks {
			ns = append(ns, n)
		}
	} else {
		l := b.rows.frames()
		if ns = l.slice(); l.x == nil {
			ns = slices.Clone(ns) // sorted below: not the list's own
		}
	}
	slices.Sort(ns)
	return ns
}

// freeName is name, or when a file has it, the first of NAME-2.EXT,
// NAME-3.EXT ... that none has.
func freeName(name string) string {
	if _, err := os.Lstat(name); errors.Is(err, os.ErrNotExist) {
		return name
	}
	ext := filepath.Ext(name)
	stem := strings.TrimSuffix(name, ext)
	for i := 2; ; i++ {
		n := stem + "-" + strconv.Itoa(i) + ext
		if _, err := os.Lstat(n); errors.Is(err, os.ErrNotExist) {
			return n
		}
	}
}

// mayWrite reports whether the export may go to name: it is free, or the
// user pressed enter on it a second time after being told it exists.
func (b *Browser) mayWrite(name string) bool {
	if name == "" {
		b.setHint("[red]no file name[-]")
		return false
	}
	if _, err := os.Lstat(name); err == nil && b.confirm != name {
		b.confirm = name
		b.setHint("[yellow]" + tview.Escape(name) + " exists: enter again overwrites it, esc keeps it[-]")
		return false
	}
	return true
}

// export writes the frames to name in the background: pcap for a .pcap
// name, else pcapng. The frames are copied from the capture as they are,
// not decoded.
func (b *Browser) export(name string) {
	ns := b.exportFrames(b.exportMarked)
	if strings.EqualFold(filepath.Ext(name), ".csv") {
		b.exportColumns(name, ns)
		return
	}
	format := "pcapng"
	if strings.EqualFold(filepath.Ext(name), ".pcap") {
		format = "pcap"
	}
	b.message = fmt.Sprintf("[yellow]writing %d frames to %s…[-]", len(ns), tview.Escape(name))
	go func() {
		err := b.idx.write(name, format, ns)
		b.App.QueueUpdateDraw(func() {
			if err != nil {
				b.message = "[red]" + tview.Escape(err.Error()) + "[-]"
			} else {
				b.message = fmt.Sprintf("wrote %d frames to %s (%s)", len(ns), tview.Escape(name), format)
			}
			b.redraw()
		})
	}()
}

// write saves frames ns to a new file name as pcap or pcapng.
func (x *Index) write(name, format string, ns []int32) (err error) {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<16)
	var put func(gopacket.CaptureInfo, []byte) error
	flush := bw.Flush
	if format == "pcap" {
		w := pcapgo.NewWriterNanos(bw)
		if err := w.WriteFileHeader(262144, x.lt); err != nil {
			return err
		}
		put = w.WritePacket
	} else {
		w, err := pcapgo.NewNgWriter(bw, x.lt)
		if err != nil {
			return err
		}
		put = w.WritePacket
		flush = func() error { // the pcapng writer buffers too
			if err := w.Flush(); err != nil {
				return err
			}
			return bw.Flush()
		}
	}
	rr, err := x.newRecordReader()
	if err != nil {
		return err
	}
	defer rr.Close()
	for _, n := range ns {
		ci, data, err := rr.read(n)
		if err != nil {
			return err
		}
		ci.InterfaceIndex = 0 // the file's one interface, whatever the source's ifindex
		ci.AncillaryData = nil
		if ci.Timestamp.IsZero() {
			ci.Timestamp = time.Unix(0, 0)
		}
		if err := put(ci, data); err != nil {
			return err
		}
	}
	return flush()
}

// exportColumns writes the frames' rows to name as CSV: the list's
// columns (o, C), their headings first, each value whole as the list
// shows it (in the time format chosen). The rows are decoded in the
// background, laid out on the UI goroutine, which owns the layout.
func (b *Browser) exportColumns(name string, ns []int32) {
	fields := slices.Clone(b.fieldCols)
	b.message = fmt.Sprintf("[yellow]writing the columns of %d frames to %s…[-]", len(ns), tview.Escape(name))
	go func() {
		rows := b.idx.rows(ns, fields)
		b.App.QueueUpdateDraw(func() {
			err := b.writeCSV(name, ns, rows)
			if err != nil {
				b.message = "[red]" + tview.Escape(err.Error()) + "[-]"
			} else {
				b.message = fmt.Sprintf("wrote the columns of %d frames to %s (CSV)", len(ns), tview.Escape(name))
			}
			b.redraw()
		})
	}()
}

// writeCSV writes rows of frames ns under the list's headings.
func (b *Browser) writeCSV(name string, ns []int32, rows map[int32]row) (err error) {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	w := csv.NewWriter(f) // buffered: Flush writes it out
	head := make([]string, len(b.cols))
	for i, c := range b.cols {
		head[i] = c.Heading()
	}
	if err := w.Write(head); err != nil {
		return err
	}
	var prev row
	for _, n := range ns {
		r := rows[n]
		if err := w.Write(b.cells(n, r, prev)); err != nil {
			return err
		}
		prev = r
	}
	w.Flush()
	return w.Error()
}
