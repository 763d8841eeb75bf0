package prompts

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSubstituteLikeThePredecessor(t *testing.T) {
	vals := Data{Project: "Shop", ProjectPath: "/p", MainBranch: "main", StateDir: "/p", FeatureCount: 7,
		FeaturesCompleted: 5, ArchitectureInterval: 5, TechDebtThreshold: 4}.Values("input.txt", 0)
	in := "# {{PROJECT_NAME}} in {{PROJECT_PATH}}\ngit merge-base {{MAIN_BRANCH}} HEAD\n" +
		"{{AGENT_STATE_DIR}}/progress.json {{FEATURE_COUNT}} {{FEATURES_COMPLETED}}/{{ARCHITECTURE_INTERVAL}} {{TECH_DEBT_THRESHOLD}} {{INPUT_FILE}}\n" +
		"<div>{{ item.name }}</div> {{SESSION_ID}} {{VERIFICATION_DIR}}\n"
	want := "# Shop in /p\ngit merge-base main HEAD\n" +
		"/p/progress.json 7 5/5 4 input.txt\n" +
		"<div>{{ item.name }}</div> {{SESSION_ID}} {{VERIFICATION_DIR}}\n"
	if got := Substitute(in, vals); got != want {
		t.Fatalf("Substitute =\n%s\nwant\n%s", got, want)
	}
	if got := (Data{FeatureCount: 3}).Values("", 50)["FEATURE_COUNT"]; got != "50" {
		t.Fatalf("a given feature count wins: %s", got)
	}
}

func TestRenderPredecessor(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "reviewer_prompt.md"), []byte("git checkout {{MAIN_BRANCH}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := RenderPredecessor(dir, "review", map[string]string{"MAIN_BRANCH": "trunk"})
	if err != nil || got != "git checkout trunk\n" {
		t.Fatalf("RenderPredecessor = %q, %v", got, err)
	}
	_, err = RenderPredecessor(dir, "GLOBAL_FIX", nil)
	if err == nil || !strings.Contains(err.Error(), "global_fix_prompt.md") || !strings.Contains(err.Error(), "coding_prompt.md") {
		t.Fatalf("a missing file names it and what the directory holds: %v", err)
	}
	if missing := CheckPredecessorDir(dir); len(missing) != len(PredecessorFiles)-1 {
		t.Fatalf("CheckPredecessorDir = %v", missing)
	}
	for role, file := range PredecessorFiles {
		if !strings.HasSuffix(file, "_prompt.md") {
			t.Errorf("role %s: file %s", role, file)
		}
	}
}
