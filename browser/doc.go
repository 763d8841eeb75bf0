// Package browser tests baton's HTML audit report in a real browser:
// headless Chromium renders the report of a whole demo project, and the
// test checks that every feature and review is there, that it needs
// nothing from the network, that its keyboard navigation and timeline
// filter work, that it prints, and that its screenshot shows a page.
//
// The package holds only tests; 'make browser' runs them. Without a
// Chromium the test skips on a developer's machine and fails in CI
// (CI=true), where .ci/run installs it. Knobs:
//
//	CHROMIUM                 the browser to run (default: chromium, chromium-browser, google-chrome on PATH)
//	BATON_REPORT_SCREENSHOT  also copy the screenshot to this path, to look at
package browser
