package mcpserver

import "github.com/baton-cli/baton/internal/workflow"

// catalog is every tool baton's MCP server has, in the order it lists
// them. Which of them a server offers is its caller's role's: the reads
// to everyone, each write to the roles the responsibility matrix lets
// take its action (workflow.Check) — IMPLEMENT never sees merge, REVIEW
// never sees add_fix, an unbound server sees only the reads.
func catalog() []spec {
	return []spec{
		def("context", "What your session needs now: task, history, git facts, rules of your role, pointers. Call it first, and after a context compaction.", contextTool),
		def("next", "Which role runs next, on what, and the rule that decided it.", nextTool),
		def("status", "Phase, feature, branch, counters, last session and review, fix cycles left, problems.", statusTool),
		def("session_current", "The session this server is bound to.", sessionCurrentTool),
		def("features_list", "Every feature, bug and tech-debt item.", featuresListTool),
		def("features_get", "One feature, bug or tech-debt item by id.", featuresGetTool),
		def("features_next", "The first pending item.", featuresNextTool),
		def("reviews_get", "A review with its issues (default: the last review).", reviewsGetTool),
		def("fix_count", "Fixes recorded for a feature and the fix cycles left.", fixCountTool),
		def("progress_session", "A recorded session.", progressSessionTool),
		def("log", "The audit timeline, oldest first: who did what, refusals included.", logTool),

		def("session_end", "End your session: record its outcome and summary; the next phase is computed. Your last call.", sessionEndTool, workflow.RecordSession),
		def("add_session", "Record a finished session of your role (prefer session_end).", addSessionTool, workflow.RecordSession),
		def("add_review", "Record your review of a branch (issue ids assigned).", addReviewTool, workflow.AddReview),
		def("add_fix", "Record a fix answering a review's issues.", addFixTool, workflow.AddFix),
		def("merge", "Merge the branch of a passing review into main, mark its features passing, delete the branch.", mergeTool, workflow.Merge).destroys(),
		def("reject", "Reject a review's work: delete its branch, requeue its features.", rejectTool, workflow.DeleteBranch).destroys(),
		def("feature_pass", "Mark a feature passing (merge does this for a passing review's features).", featurePassTool, workflow.MarkPassing).repeatable(),
		def("mark_merged", "Mark a fix merged to main.", markMergedTool, workflow.MarkMerged).repeatable(),
		def("update_status", "Set the feature or branch now worked on.", updateStatusTool, workflow.SetStatus).repeatable(),
		def("feature_fail", "Mark a feature failing (a regression), saying why.", featureFailTool, workflow.MarkFailing).repeatable(),
		def("append_features", "Append features, bugs or tech-debt items to the feature list.", appendTool, workflow.AppendFeatures),
		def("append_debt", "Record tech-debt items (leftovers worth doing later).", appendDebtTool, workflow.AppendDebt),
		def("create_branch", "Create your work branch from main.", createBranchTool, workflow.CreateFeatureBranch, workflow.CreateRefactorBranch),
	}
}
