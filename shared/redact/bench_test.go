package redact

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// chatLines are the lines the benchmark corpus is drawn from: chat between a person and an
// assistant, with the numbers such text holds (times, dates, amounts, versions, code).
var chatLines = []string{
	"Hi! Can you help me plan a trip to Lisbon next month?",
	"Sure. How many days do you have, and what is your budget?",
	"About 5 days, maybe 1,200 EUR in total, flights included.",
	"Then I would book the flight early: prices go up 2 to 3 weeks before departure.",
	"What about the weather in late April? Is 20°C realistic?",
	"Yes, 18 to 22°C during the day is typical, with some rain.",
	"I prefer metric units and a vegetarian diet, please remember that.",
	"Noted. Here is a plan for day 1: Alfama in the morning, the tram 28 at 10:30, lunch at 13:00.",
	"Can you convert 250 USD to euros at today's rate?",
	"At 0.92 EUR per USD that is about 230 EUR.",
	"My order #100234 has not arrived yet, it was shipped on 2024-03-15.",
	"I'm sorry to hear that. Tracking usually takes 3-5 business days to update.",
	"The build fails with go 1.22.5 but works with 1.21.0, any idea?",
	"Check the go.mod file: the toolchain line may pin version 1.22.5.",
	"Here is the error: main.go:42: undefined: http.NewServeMux",
	"Run `go vet ./...` and `go test -run TestHandler -v` and paste the output.",
	"for i := 0; i < 10; i++ { sum += i * 2 }",
	"SELECT id, created_at FROM sessions WHERE user_id = $1 ORDER BY created_at DESC LIMIT 20;",
	"The meeting moved to Thursday at 3 pm, room 4.12.",
	"Remind me to call the dentist tomorrow at 9:15.",
	"What's the difference between a Roth IRA and a 401(k)?",
	"A Roth IRA is funded with after-tax money; withdrawals in retirement are tax-free.",
	"Summarise this article in 3 bullet points, under 100 words.",
	"1. Prices rose 3.4% in March. 2. Rents led the increase. 3. Energy fell 1.2%.",
	"Translate 'good morning, how are you?' into French and German.",
	"Bonjour, comment allez-vous ? / Guten Morgen, wie geht es Ihnen?",
	"My daughter is 7 and loves dinosaurs; any book ideas for ages 6-8?",
	"Try 'Dinosaurs Before Dark' (Magic Tree House #1) and 'How Do Dinosaurs Say Good Night?'.",
	"I ran 10 km in 52:30 today, is that good for a beginner?",
	"That's a pace of 5:15 per km, a solid time for someone starting out.",
	"Please write a haiku about autumn leaves.",
	"Red leaves drift and fall / the river carries their light / autumn lets them go",
	"Can you explain the CAP theorem with an example?",
	"In a network partition a distributed store must choose between consistency and availability.",
	"The invoice total is 4,567.89 EUR, due 30 days after 2024-06-01.",
	"Our team grew from 12 to 45 people between 2021 and 2023.",
	"Set the timeout to 30s and retry up to 5 times with exponential backoff.",
	"Kubernetes 1.28 deprecates a few APIs; check kubectl version --short first.",
	"The recipe needs 200 g flour, 2 eggs, 150 ml milk and a pinch of salt.",
	"What's 15% of 2,340? That's 351.",
}

// piiLines each hold personal data of one kind or more.
var piiLines = []string{
	"You can reach me at john.doe@example.com if anything changes.",
	"Call me at (555) 123-4567 after 6 pm.",
	"Mon numéro : +33 6 12 34 56 78, merci.",
	"My card 4111 1111 1111 1111 was charged twice.",
	"Please refund to DE89 3704 0044 0532 0130 00.",
	"The server at 192.168.1.10 stopped answering, and 2001:db8::1 too.",
	"UK office 020 7946 0958, or email office@example.co.uk.",
}

// chatCorpus returns about size bytes of messages, one a line; one message in fifty holds
// personal data.
func chatCorpus(size int, seed uint64) string {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	var b strings.Builder
	for b.Len() < size {
		if rng.IntN(50) == 0 {
			b.WriteString(piiLines[rng.IntN(len(piiLines))])
		} else {
			for range 1 + rng.IntN(3) {
				b.WriteString(chatLines[rng.IntN(len(chatLines))])
				b.WriteByte(' ')
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// runText times Text over texts (n bytes in all) b.N times, and reports MB per CPU second beside
// go test's MB per wall second.
func runText(b *testing.B, r *Redactor, n int, texts ...string) {
	b.SetBytes(int64(n))
	t0 := cpuTime()
	for b.Loop() {
		for _, s := range texts {
			r.Text(s)
		}
	}
	if cpu := cpuTime() - t0; cpu > 0 {
		b.ReportMetric(float64(n)*float64(b.N)/1e6/cpu.Seconds(), "MB/cpu-s")
	}
}

// BenchmarkText measures Text on chat text, one message of 40 to 300 bytes at a time (as an event
// carries them) and as one 1 MB document; MB/s is what `go test -bench` prints, MB/cpu-s the
// same per CPU second.
func BenchmarkText(b *testing.B) {
	r := testRedactor(b)
	corpus := chatCorpus(1<<20, 42)
	msgs := strings.SplitAfter(corpus, "\n")
	b.Run("chat-messages", func(b *testing.B) { runText(b, r, len(corpus), msgs...) })
	b.Run("chat-1MB", func(b *testing.B) { runText(b, r, len(corpus), corpus) })
	clean := chatCorpus(1<<20, 7)
	var kept []string
	for _, m := range strings.SplitAfter(clean, "\n") {
		if len(Find(m)) == 0 {
			kept = append(kept, m)
		}
	}
	clean = strings.Join(kept, "")
	b.Run("no-pii-1MB", func(b *testing.B) { runText(b, r, len(clean), clean) })
	dense := strings.Repeat(strings.Join(piiLines, " "), 1+(1<<20)/len(strings.Join(piiLines, " ")))
	b.Run("pii-dense-1MB", func(b *testing.B) { runText(b, r, len(dense), dense) })
}

// BenchmarkWorstCase measures texts built against the scan: long runs of the characters it
// stops at, and many distinct values (the search for their other occurrences).
func BenchmarkWorstCase(b *testing.B) {
	r := testRedactor(b)
	var emails, lengths strings.Builder
	for i := 0; emails.Len() < 400_000; i++ {
		fmt.Fprintf(&emails, "u%d@example.com ", i)
	}
	for i := 0; lengths.Len() < 400_000; i++ {
		fmt.Fprintf(&lengths, "%s@%s.com ", strings.Repeat("a", 1+i%60), strings.Repeat("b", 1+(i/60)%60))
	}
	cases := []struct{ name, text string }{
		{"digits-spaces", strings.Repeat("1 ", 200_000)},
		{"colons", strings.Repeat(":", 400_000)},
		{"hex-colons", strings.Repeat("a:", 200_000)},
		{"ats", strings.Repeat("a@", 200_000)},
		{"dots", strings.Repeat("1.", 200_000)},
		{"phones", strings.Repeat("06 12 34 56 78 ", 27_000)},
		{"ipv4", strings.Repeat("1.2.3.4 ", 50_000)},
		{"distinct-emails", emails.String()},
		{"email-lengths", lengths.String()},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) { runText(b, r, len(c.text), c.text) })
	}
}

// BenchmarkRegexpBaseline is the comparison the package doc cites: the candidate patterns a
// regular-expression redactor would start from (before any Luhn, mod-97 or context check),
// as one RE2 alternation run over the same chat text.
func BenchmarkRegexpBaseline(b *testing.B) {
	re := regexp.MustCompile(`[A-Za-z0-9._%+'-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}` +
		`|\+?\(?\d[\d ().-]{6,}\d` +
		`|\b\d{1,3}(?:\.\d{1,3}){3}\b` +
		`|[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}`)
	corpus := chatCorpus(1<<20, 42)
	b.SetBytes(int64(len(corpus)))
	t0 := cpuTime()
	for b.Loop() {
		re.FindAllStringIndex(corpus, -1)
	}
	if cpu := cpuTime() - t0; cpu > 0 {
		b.ReportMetric(float64(len(corpus))*float64(b.N)/1e6/cpu.Seconds(), "MB/cpu-s")
	}
}
