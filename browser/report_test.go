package browser

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

// batonBin is the binary built once by TestMain.
var batonBin string

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	tmp, err := os.MkdirTemp("", "baton-browser-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "browser:", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	batonBin = filepath.Join(tmp, "baton")
	build := exec.Command("go", "build", "-o", batonBin, "github.com/baton-cli/baton/cmd/baton")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "browser: go build: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// findChromium is the browser to test with, or "" when there is none.
func findChromium() string {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// needChromium returns the browser; without one the test fails in CI and
// skips elsewhere.
func needChromium(t *testing.T) string {
	t.Helper()
	p := findChromium()
	if p != "" {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no Chromium found (chromium, chromium-browser or google-chrome on PATH, or $CHROMIUM): CI must test the report in a browser; .ci/run installs Debian's chromium package")
	}
	t.Skip("no Chromium on this machine (install Debian's chromium package, or set CHROMIUM): the report is not tested in a browser")
	return ""
}

func baton(t *testing.T, dir string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(batonBin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "BATON_STATE_DIR="+dir)
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("baton %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr)
	}
	return out
}

// chromium runs the browser headless on a page and returns its stdout.
func chromium(t *testing.T, browser string, args ...string) []byte {
	t.Helper()
	profile := t.TempDir()
	all := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
		"--user-data-dir=" + profile}, args...)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, all...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", browser, strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// project builds the demo project (every kind of step: a REQUEST_CHANGES
// cycle, a REJECT, architecture reviews, the fix-cycle limit, tech debt)
// plus a refused attempt, and writes its report.
func project(t *testing.T) (dir, report string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "shop")
	baton(t, filepath.Dir(dir), "demo", "--dir", dir)
	cmd := exec.Command(batonBin, "features", "pass", "F001")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "BATON_STATE_DIR="+dir, "BATON_ROLE=", "BATON_SESSION=")
	if err := cmd.Run(); err == nil {
		t.Fatal("baton features pass without a role was not refused")
	}
	report = filepath.Join(dir, "audit report.html")
	baton(t, dir, "report", "-o", report)
	return dir, report
}

// TestReportInBrowser renders the report of a whole project in Chromium.
func TestReportInBrowser(t *testing.T) {
	browser := needChromium(t)
	dir, report := project(t)
	html, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	selfContained(t, html)

	dom := string(chromium(t, browser, "--virtual-time-budget=5000", "--dump-dom", fileURL(report)))
	if !regexp.MustCompile(`<body[^>]* data-ready="[1-9]\d*"`).MatchString(dom) {
		t.Errorf("the report's script did not run (no data-ready on body):\n%.2000s", dom)
	}
	for _, id := range ids(t, dir, []string{"features", "list"}, "features.#.id") {
		if !strings.Contains(dom, `id="story-`+id+`"`) {
			t.Errorf("feature %s has no story in the rendered report", id)
		}
	}
	for _, id := range ids(t, dir, []string{"reviews", "list"}, "reviews.#.review_id") {
		if !strings.Contains(dom, `id="review-R`+id+`"`) {
			t.Errorf("review R%s is missing from the rendered report", id)
		}
	}
	for _, want := range []string{"Verify", "OK</b>: ", "Refused attempts", "REFUSED: ", "Merged</b>: review R", "Timeline", "REJECT", "DEBT-001", "review R"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the rendered report does not show %q", want)
		}
	}
	keyboard(t, browser, report)
	screenshot(t, browser, report)
	printable(t, browser, report)
}

// ids lists a field of a baton command's --json document.
func ids(t *testing.T, dir string, args []string, path string) []string {
	t.Helper()
	var out []string
	for _, v := range gjson.GetBytes(baton(t, dir, append([]string{"--json"}, args...)...), path).Array() {
		out = append(out, v.String())
	}
	if len(out) == 0 {
		t.Fatalf("baton %s listed no %s", strings.Join(args, " "), path)
	}
	return out
}

func fileURL(path string) string {
	return "file://" + strings.ReplaceAll(filepath.ToSlash(path), " ", "%20")
}

// selfContained: the file loads nothing: no external script, style,
// image, font or frame, and no URL a browser would fetch.
func selfContained(t *testing.T, html []byte) {
	t.Helper()
	for _, re := range []string{`<script[^>]+src=`, `<link[^>]+href=`, `<img[^>]+src=`, `<iframe`, `@import`, `url\(`, `src="(https?:)?//`, `href="(https?:)?//`} {
		if m := regexp.MustCompile(re).Find(html); m != nil {
			t.Errorf("the report loads something from outside the file: %s", m)
		}
	}
}

// keyboard drives the report's keys from a page that frames it (file
// pages may read each other with --allow-file-access-from-files) and
// reads where the focus went.
func keyboard(t *testing.T, browser, report string) {
	t.Helper()
	page := filepath.Join(filepath.Dir(report), "keys.html")
	harness := `<!DOCTYPE html><html><body><iframe id="f" src="` + filepath.Base(report) + `" style="width:1200px;height:900px"></iframe><pre id="out">not run</pre>
<script>
var f = document.getElementById("f");
f.onload = function () {
  var d = f.contentDocument, w = f.contentWindow, res = [];
  function key(k) { d.dispatchEvent(new w.KeyboardEvent("keydown", {key: k, bubbles: true})); res.push(k + "=" + (d.activeElement.id || d.activeElement.tagName)); }
  key("j"); key("j"); key("j"); key("k"); key("/");
  var filter = d.getElementById("filter");
  filter.value = "REFUSED"; filter.dispatchEvent(new w.Event("input"));
  var rows = d.querySelectorAll("#events tbody tr"), shown = 0;
  rows.forEach(function (r) { if (!r.hidden) shown++; });
  res.push("rows=" + rows.length + " shown=" + shown);
  key("?"); res.push("help=" + d.getElementById("help").className);
  document.getElementById("out").textContent = res.join(" ");
};
</script></body></html>`
	if err := os.WriteFile(page, []byte(harness), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := string(chromium(t, browser, "--allow-file-access-from-files", "--virtual-time-budget=5000", "--dump-dom", fileURL(page)))
	m := regexp.MustCompile(`<pre id="out">([^<]*)</pre>`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("the keyboard page did not run:\n%.2000s", dom)
	}
	got := m[1]
	for _, want := range []string{"j=summary j=verify j=features k=verify /=filter", "help=open"} {
		if !strings.Contains(got, want) {
			t.Errorf("keys: got %q, want %q in it", got, want)
		}
	}
	rows := regexp.MustCompile(`rows=(\d+) shown=(\d+)`).FindStringSubmatch(got)
	if rows == nil || rows[2] == "0" || rows[1] == rows[2] {
		t.Errorf("the timeline filter did not narrow the rows to the refused ones: %q", got)
	}
}

// screenshot renders the top of the report to a PNG and checks it shows a
// page: the size asked for, and text and colour on it.
func screenshot(t *testing.T, browser, report string) {
	t.Helper()
	shot := filepath.Join(t.TempDir(), "report.png")
	chromium(t, browser, "--hide-scrollbars", "--window-size=1280,1600", "--virtual-time-budget=5000", "--screenshot="+shot, fileURL(report))
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("the screenshot is not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 1280 || b.Dy() != 1600 {
		t.Errorf("screenshot is %dx%d, want 1280x1600", b.Dx(), b.Dy())
	}
	dark, colours := inked(img)
	if dark < 0.005 || dark > 0.5 {
		t.Errorf("the screenshot is not a page of text: %.3f of it is dark", dark)
	}
	if colours < 20 {
		t.Errorf("the screenshot has %d colours: nothing rendered", colours)
	}
	if p := os.Getenv("BATON_REPORT_SCREENSHOT"); p != "" {
		data, _ := os.ReadFile(shot)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Errorf("BATON_REPORT_SCREENSHOT: %v", err)
		}
	}
}

// inked is the share of dark pixels and the number of distinct colours.
func inked(img image.Image) (float64, int) {
	b := img.Bounds()
	dark, total := 0, 0
	seen := map[uint32]bool{}
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			total++
			if (r+g+bl)/3 < 0x6000 {
				dark++
			}
			seen[(r>>11)<<10|(g>>11)<<5|bl>>11] = true
		}
	}
	return float64(dark) / float64(total), len(seen)
}

// printable prints the report to PDF: print styles hide the navigation
// and show every section, over several pages.
func printable(t *testing.T, browser, report string) {
	t.Helper()
	pdf := filepath.Join(t.TempDir(), "report.pdf")
	chromium(t, browser, "--virtual-time-budget=5000", "--no-pdf-header-footer", "--print-to-pdf="+pdf, fileURL(report))
	data, err := os.ReadFile(pdf)
	if err != nil {
		t.Fatalf("no PDF: %v", err)
	}
	if !bytes.HasPrefix(data, []byte("%PDF")) {
		t.Fatalf("the printout is not a PDF")
	}
	if pages := len(regexp.MustCompile(`/Type\s*/Page[^s]`).FindAll(data, -1)); pages < 2 {
		t.Errorf("the printout has %d page(s): the report does not print whole", pages)
	}
}
