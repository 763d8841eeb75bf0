package cli

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/muesli/termenv"
	"golang.org/x/term"

	"github.com/baton-cli/baton/internal/app"
)

// The live view of a lanes run on a terminal: below the run's log lines,
// one line per lane (item, role, session, elapsed time, the agent's latest
// output line), the landing queue, and the counts landed and to do, redrawn
// in place each second and after every event. The log lines stay in the
// scrollback above it. Not on a terminal, with TERM=dumb or under --json
// there is no view: the log lines alone, as plain lines or JSON events.

// laneView is the view on the terminal f. Its lock keeps a line written
// by the lander's goroutine (a warning) from cutting into a redraw.
type laneView struct {
	mu    sync.Mutex
	f     *os.File
	out   *termenv.Output
	shown int // lines of the view on screen, the cursor on the line below
	board app.Board
	gate  string // the items the gate runs on ("" when it does not run)
}

// newLaneView is the run's view, nil when stderr is not a terminal that
// can redraw.
func (a *App) newLaneView() *laneView {
	f, ok := a.env.Stderr.(*os.File)
	if !ok || !a.interactive(f) {
		return nil
	}
	return &laneView{f: f, out: termenv.NewOutput(f, termenv.WithProfile(termenv.Ascii))}
}

// clear takes the view off the screen, the cursor where its first line was.
func (v *laneView) clear() {
	if v == nil {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.erase()
}

func (v *laneView) erase() {
	if v.shown > 0 {
		v.out.ClearLines(v.shown)
		v.shown = 0
	}
}

// print writes a log line above the view; the next draw shows the view
// again.
func (v *laneView) print(line string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.erase()
	fmt.Fprintln(v.f, line)
}

// draw shows lines, each cut to the terminal's width so that none wraps.
func (v *laneView) draw(lines []string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.erase()
	w, _, err := term.GetSize(int(v.f.Fd()))
	if err != nil || w <= 0 {
		w = 80
	}
	for _, l := range lines {
		if r := []rune(l); len(r) > w-1 {
			l = string(r[:max(w-2, 1)]) + "…"
		}
		fmt.Fprintln(v.f, l)
	}
	v.shown = len(lines)
}

// viewLines are the view's lines for run r at now.
func viewLines(r *laneRun, v *laneView, now time.Time) []string {
	ids := make([]int, 0, len(r.running))
	for id := range r.running {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	lines := []string{fmt.Sprintf("── %d of %d lanes busy", len(ids), r.k)}
	for _, id := range ids {
		l := r.running[id]
		label := fmt.Sprintf("  %s %s session %d", app.OrDash(l.st.Feature), l.st.Role, id)
		lines = append(lines, progressText(label, now.Sub(l.start).Round(time.Second), l.out.Latest()))
	}
	queue := "empty"
	if len(v.board.Queue) > 0 {
		queue = strings.Join(v.board.Queue, ", ")
	}
	if v.gate != "" {
		queue += " — the gate runs on " + v.gate
	}
	lines = append(lines, "  queue: "+safeText(queue), fmt.Sprintf("  landed %d · to do %d", v.board.Landed, v.board.ToDo))
	return lines
}

// drawLanes redraws the view, reading the queue and the counts again when
// fresh (after an event; a tick only moves the clocks).
func (a *App) drawLanes(ctx context.Context, r *laneRun, fresh bool) {
	v := a.view
	if v == nil {
		return
	}
	if fresh {
		if b, err := a.app.Board(ctx, a.caller()); err == nil {
			v.board = b
		}
	}
	v.draw(viewLines(r, v, a.env.Now()))
}
