package prompts

// FactsSchema is factsSchema, for the tests.
var FactsSchema = factsSchema

// CheckFacts is checkFacts, for the tests.
var CheckFacts = checkFacts

// CheckSummary checks a summary answer, for the tests.
func CheckSummary(r *Runner, output []byte) (string, error) { return checkSummary(r, output) }
