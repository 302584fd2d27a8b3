package bench

import (
	"fmt"

	"github.com/google/uuid"
)

// QualityK is how deep the retrieval-quality metrics look, and how many memories each question
// asks for: a labelled fact ranked below it counts as not found.
const QualityK = 10

// LabelledUser is one user of the labelled set: the facts an agent has stored about them and
// the questions asked of those facts.
type LabelledUser struct {
	Name      string
	Facts     []LabelledFact
	Questions []LabelledQuestion
}

// LabelledFact is one stored memory; Key names it within its user.
type LabelledFact struct {
	Key     string
	Content string
}

// LabelledQuestion is a recall query and the Key of the one fact of the same user that
// answers it.
type LabelledQuestion struct {
	Text string
	Fact string
}

// LabelledUserID is the UUID of labelled user u: 00000000-0000-4000-b000- + u as 12 decimal
// digits, apart from the chat, recall and sweep users.
func LabelledUserID(u int) uuid.UUID {
	return uuid.MustParse(fmt.Sprintf("00000000-0000-4000-b000-%012d", u))
}

// Labelled returns the labelled retrieval set. The facts read as a chat agent stores them; the
// questions are asked as the user or the agent would ask them, so some share the fact's words,
// some only a stem or a word piece, some none, and many share words with a neighbouring fact.
// Several facts of a user compete (two birthdays, a laptop and a phone, a job and a side
// project), so the order matters, not only whether the fact is found.
func Labelled() []LabelledUser {
	return []LabelledUser{
		{
			Name: "Maya",
			Facts: []LabelledFact{
				{"allergy", "Allergic to peanuts and carries an EpiPen"},
				{"diet", "Vegetarian since 2019, but eats fish occasionally"},
				{"job", "Works as a backend engineer at a fintech startup in Berlin"},
				{"sister", "Sister Lena lives in Lisbon and works as a nurse"},
				{"birthday", "Birthday is on March 14"},
				{"sister-birthday", "Lena's birthday is on July 2; she likes orchids"},
				{"laptop", "Uses a 2021 MacBook Pro with 32 GB of memory for work"},
				{"phone", "Phone is a Pixel 7; prefers Android over iPhone"},
				{"project", "Side project: a Rust CLI for tracking climbing sessions"},
				{"climbing", "Goes bouldering twice a week at a gym in Kreuzberg"},
			},
			Questions: []LabelledQuestion{
				{"What is Maya allergic to?", "allergy"},
				{"Any food allergies I should know about before recommending a restaurant?", "allergy"},
				{"Does she eat meat?", "diet"},
				{"When is my birthday?", "birthday"},
				{"When is my sister's birthday?", "sister-birthday"},
				{"Where does Lena live?", "sister"},
				{"What flowers should I buy for Lena?", "sister-birthday"},
				{"Which company do I work for?", "job"},
				{"What laptop do I have?", "laptop"},
				{"How much RAM does my computer have?", "laptop"},
				{"Is she an iPhone user?", "phone"},
				{"What programming language is my side project written in?", "project"},
				{"How often do I go climbing?", "climbing"},
				{"Which gym does she boulder at?", "climbing"},
			},
		},
		{
			Name: "Tom",
			Facts: []LabelledFact{
				{"dog", "Has a golden retriever named Biscuit who is 9 years old"},
				{"vet", "Biscuit's vet is Dr. Alvarez at Riverside Animal Clinic"},
				{"wife", "Wife Susan is a retired nurse; they married in 1985"},
				{"anniversary", "Wedding anniversary is on June 8"},
				{"home", "Lives in a cottage near Bath, England"},
				{"career", "Taught chemistry at a secondary school for 32 years before retiring"},
				{"medication", "Takes metformin for type 2 diabetes, twice a day with meals"},
				{"garden", "Grows tomatoes and runner beans in his vegetable garden"},
				{"car", "Drives a 2015 Volvo V70 estate"},
				{"grandson", "Grandson Oliver turns 7 in September and loves dinosaurs"},
			},
			Questions: []LabelledQuestion{
				{"What's my dog's name?", "dog"},
				{"How old is Biscuit?", "dog"},
				{"Who is the vet for my dog?", "vet"},
				{"When did I get married?", "wife"},
				{"When is our wedding anniversary?", "anniversary"},
				{"What did I teach before I retired?", "career"},
				{"What medicine do I take for my diabetes?", "medication"},
				{"Remind me when to take my pills", "medication"},
				{"What vegetables am I growing this year?", "garden"},
				{"What car do I drive?", "car"},
				{"What could I get Oliver for his birthday?", "grandson"},
				{"Where do I live?", "home"},
				{"How old is my grandson?", "grandson"},
			},
		},
		{
			Name: "Priya",
			Facts: []LabelledFact{
				{"job", "Data scientist at a hospital in Toronto, working on sepsis prediction models"},
				{"thesis", "Finishing a PhD thesis on causal inference, defence planned for May 2025"},
				{"advisor", "PhD advisor is Professor Okafor, who prefers email over Slack"},
				{"coffee", "Drinks oat milk flat whites; avoids dairy because of lactose intolerance"},
				{"trip", "Flying to Tokyo on October 3 for a machine learning conference"},
				{"hotel", "Booked the Hotel Gracery in Shinjuku for the Tokyo trip, checking out October 9"},
				{"language", "Learning Japanese on Duolingo, about 20 minutes every morning"},
				{"editor", "Writes code in VS Code with the Vim extension"},
				{"stack", "Prefers Python with pandas and PyTorch for modelling work"},
				{"partner", "Partner Sam is a pastry chef who works late shifts"},
			},
			Questions: []LabelledQuestion{
				{"Where does Priya work?", "job"},
				{"What is my thesis about?", "thesis"},
				{"When is my PhD defence?", "thesis"},
				{"How should I contact my advisor?", "advisor"},
				{"Can I have regular milk in my coffee?", "coffee"},
				{"Is she lactose intolerant?", "coffee"},
				{"When is my flight to Tokyo?", "trip"},
				{"Which hotel am I staying at in Tokyo?", "hotel"},
				{"When do I check out of the hotel?", "hotel"},
				{"What language am I learning?", "language"},
				{"What editor do I use for coding?", "editor"},
				{"Which deep learning framework do I like?", "stack"},
				{"What does my partner do for a living?", "partner"},
				{"What time does Sam finish work?", "partner"},
			},
		},
		{
			Name: "Diego",
			Facts: []LabelledFact{
				{"business", "Runs a coffee roastery called Tostado in Mexico City"},
				{"band", "Plays bass in a jazz trio that performs on Friday nights"},
				{"instruments", "Owns a 1978 Fender Precision bass and a Yamaha acoustic guitar"},
				{"spanish", "Native Spanish speaker; prefers replies in Spanish when messages are personal"},
				{"mother", "Mother Carmen lives in Guadalajara and has knee surgery scheduled for April 12"},
				{"accountant", "Accountant is Rosa Méndez; quarterly taxes are due in April"},
				{"supplier", "Buys green coffee beans from a cooperative in Chiapas"},
				{"running", "Training for the Mexico City marathon in August, running 40 km a week"},
				{"allergy", "Allergic to penicillin"},
			},
			Questions: []LabelledQuestion{
				{"What's the name of my coffee shop?", "business"},
				{"Where do I get my beans from?", "supplier"},
				{"What instrument do I play in the band?", "band"},
				{"What kind of bass do I own?", "instruments"},
				{"When is the trio's next gig?", "band"},
				{"What language should you answer me in?", "spanish"},
				{"When is my mom's operation?", "mother"},
				{"How is my mother's knee?", "mother"},
				{"When are my taxes due?", "accountant"},
				{"Who does my accounting?", "accountant"},
				{"How many kilometers am I running each week?", "running"},
				{"Which marathon am I training for?", "running"},
				{"Can I take penicillin?", "allergy"},
				{"Is there any antibiotic I'm allergic to?", "allergy"},
			},
		},
		{
			Name: "Hannah",
			Facts: []LabelledFact{
				{"kids", "Has two kids: Ava (8) and Leo (5)"},
				{"school", "Ava goes to Lincoln Elementary; school pickup is at 3:15 pm"},
				{"leo-allergy", "Leo is allergic to eggs"},
				{"job", "Product manager at an outdoor gear company in Seattle"},
				{"commute", "Commutes by ferry from Bainbridge Island"},
				{"tv", "Watching The Bear; prefers dramas to reality shows"},
				{"book-club", "Book club meets on the first Tuesday of each month; currently reading Tomorrow, and Tomorrow, and Tomorrow"},
				{"knee", "Knee injury from skiing; physical therapy on Thursdays"},
				{"car", "Drives a Subaru Outback with a roof box for camping trips"},
				{"camping", "Family goes camping at Lake Crescent every August"},
			},
			Questions: []LabelledQuestion{
				{"How old are my kids?", "kids"},
				{"What time do I need to pick up Ava?", "school"},
				{"Which school does Ava attend?", "school"},
				{"Can Leo eat eggs?", "leo-allergy"},
				{"What food is my son allergic to?", "leo-allergy"},
				{"What does Hannah do for work?", "job"},
				{"Do I take the ferry to work?", "commute"},
				{"Any show recommendations? What am I watching now?", "tv"},
				{"When does my book club meet?", "book-club"},
				{"What book am I reading?", "book-club"},
				{"When is physical therapy?", "knee"},
				{"How did I hurt my knee?", "knee"},
				{"Where are we going camping this summer?", "camping"},
				{"What car does my family have?", "car"},
			},
		},
		{
			Name: "Kenji",
			Facts: []LabelledFact{
				{"monitor", "Uses a 27-inch LG UltraFine 4K monitor with his MacBook Air"},
				{"keyboard", "Types on a split mechanical keyboard with brown switches"},
				{"client", "Main freelance client is Northwind, a logistics company; invoices are sent on the 1st of each month"},
				{"rate", "Hourly rate is 85 euros, 95 for rush jobs"},
				{"project", "Redesigning the Northwind mobile app in Figma; deadline is November 30"},
				{"timezone", "Lives in Lisbon (WET/WEST time zone) and works 10:00-18:00"},
				{"game", "Plays Elden Ring on a Steam Deck in the evenings"},
				{"cat", "Has a cat named Miso who needs insulin shots twice a day"},
				{"apartment", "Rents an apartment in Alfama; landlord is Mr. Costa"},
			},
			Questions: []LabelledQuestion{
				{"What monitor do I use?", "monitor"},
				{"What kind of screen does my setup have?", "monitor"},
				{"What switches are on my keyboard?", "keyboard"},
				{"Who is my biggest client?", "client"},
				{"When do I send invoices?", "client"},
				{"How much do I charge per hour?", "rate"},
				{"When is the app redesign due?", "project"},
				{"What time zone am I in?", "timezone"},
				{"What are my working hours?", "timezone"},
				{"What game am I playing right now?", "game"},
				{"How often does my cat need insulin?", "cat"},
				{"Who is my landlord?", "apartment"},
				{"What neighbourhood do I live in?", "apartment"},
			},
		},
	}
}

// Answer is what one question got: the keys of the facts found, best first, with their scores,
// and the key of the fact it is labelled with.
type Answer struct {
	Ranked []string
	// Scores are the scores of Ranked, or nil. Entries of equal score are tied: the store
	// orders a tie by memory id, which is random, so the metrics take the mean over every place
	// the labelled fact can take within its tie, and a run scores as the next one does.
	Scores []float64
	Want   string
}

// ScoreAnswers computes hit@1, hit@5 and the mean reciprocal rank of answers; a fact ranked
// below QualityK, or not found, counts 0. No answers score zero.
func ScoreAnswers(answers []Answer) QualityScore {
	s := QualityScore{Questions: len(answers)}
	if len(answers) == 0 {
		return s
	}
	for _, a := range answers {
		at1, at5, rr := scoreAnswer(a)
		s.HitAt1 += at1
		s.HitAt5 += at5
		s.MRR += rr
	}
	n := float64(len(answers))
	s.HitAt1, s.HitAt5, s.MRR = s.HitAt1/n, s.HitAt5/n, s.MRR/n
	return s
}

// scoreAnswer is hit@1, hit@5 and the reciprocal rank of one answer, each the mean over the
// ranks its labelled fact takes in the orders of its tie (see Ranking).
func scoreAnswer(a Answer) (at1, at5, rr float64) {
	r := Ranking{Ranked: a.Ranked, Scores: a.Scores, Relevant: []string{a.Want}}
	return r.HitAt(1), r.HitAt(5), r.ReciprocalRank(QualityK)
}

// Gated is a reduced to what a gate on its best relevance (best) changes (ScoreMatching).
func (a Answer) Gated(best float64) GatedAnswer {
	r := Ranking{Ranked: a.Ranked, Scores: a.Scores, Relevant: []string{a.Want}}
	return GatedAnswer{Best: best, HitAt5: r.HitAt(5), HitAt10: r.HitAt(QualityK), RR: r.ReciprocalRank(QualityK)}
}
