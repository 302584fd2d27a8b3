package bench

// The catalogue of the conversation set. Each fact is told the way friends tell each other
// things in a chat: often after the other asks (so the question's words sit one turn before
// the answer), followed by a reply that repeats the news ("Way to go, John!"), sometimes asked
// about again sessions later. Questions name the person, as questions about a conversation do,
// while the turns that answer them rarely do (the name is the speaker's, not in the text).
// Questions marked para share no word with their evidence but the names.

func opt(kv ...string) option {
	o := option{slots: map[string]string{}}
	for i := 0; i+1 < len(kv); i += 2 {
		o.slots[kv[i]] = kv[i+1]
	}
	return o
}

// with adds questions asked only with this option.
func (o option) with(qs ...qt) option {
	o.questions = append(o.questions, qs...)
	return o
}

var conversationFacts = []fact{
	{
		id: "instruments",
		options: []option{
			opt("inst", "violin", "inst2", "viola", "started", "when I was seven"),
			opt("inst", "piano", "inst2", "ukulele", "started", "in middle school"),
			opt("inst", "cello", "inst2", "guitar", "started", "at university"),
			opt("inst", "drums", "inst2", "bass", "started", "as a teenager"),
			opt("inst", "saxophone", "inst2", "flute", "started", "in high school"),
		},
		stages: []stage{{lines: []line{
			x("By the way, what instruments do you play, {o}? You said your flat is never quiet."),
			oe("I play the {inst} and a little {inst2}. I started {started} and never really stopped."),
			x("Way to go, {o}! I always wanted to learn something like that."),
			o("It's never too late! It's how I unwind after a long day."),
		}}},
		followup: []line{
			x("Still playing the {inst} every evening, {o}?"),
			o("Most evenings, yes. My neighbours are very patient with me."),
		},
		both: &qt{text: "Which instruments do {a} and {b} play between them?", ev: []int{0}, keys: []string{"inst"}},
		questions: []qt{
			{text: "What instruments does {o} play?", kind: KindSingleHop, ev: []int{0}, keys: []string{"inst", "inst2"}, adv: true},
			{text: "Does {o} have any musical talents?", kind: KindSingleHop, ev: []int{0}, keys: []string{"inst"}, para: true},
			{text: "Would {o} be able to read sheet music?", kind: KindOpenDomain, ev: []int{0}, keys: []string{"inst"}, para: true},
		},
	},
	{
		id: "pets",
		options: []option{
			opt("pet1", "kitten", "name1", "Pepper", "pr1", "her", "pet2", "beagle puppy", "name2", "Oscar"),
			opt("pet1", "puppy", "name1", "Luna", "pr1", "her", "pet2", "rabbit", "name2", "Clover"),
			opt("pet1", "guinea pig", "name1", "Biscuit", "pr1", "him", "pet2", "kitten", "name2", "Mochi"),
			opt("pet1", "greyhound", "name1", "Dash", "pr1", "him", "pet2", "parrot", "name2", "Kiwi"),
			opt("pet1", "tabby cat", "name1", "Ginger", "pr1", "her", "pet2", "corgi", "name2", "Waffles"),
		},
		stages: []stage{
			{when: "on Saturday", lines: []line{
				oe("Guess what, we adopted a {pet1} from the shelter on Saturday! We named {pr1} {name1}."),
				x("Oh my gosh, {name1} is such a cute name! Congrats, {o}!"),
				o("Thank you! I haven't stopped smiling since."),
			}},
			{lines: []line{
				oe("Our little family grew again, {x}: we brought home a {pet2} and called it {name2}."),
				x("Two of them now! How is {name1} taking it?"),
				o("Lots of sniffing and hiding so far, but they'll get there."),
			}},
		},
		followup: []line{
			x("How are {name1} and {name2} getting along, {o}?"),
			o("Best friends now. They sleep in the same basket."),
		},
		both: &qt{text: "What pets did {a} and {b} adopt from the shelter?", ev: []int{0}, keys: []string{"pet1"}},
		questions: []qt{
			{text: "What did {o} name the {pet1} from the shelter?", kind: KindSingleHop, ev: []int{0}, keys: []string{"name1"}, adv: true},
			{text: "How many animals does {o} have, and what are their names?", kind: KindMultiHop, ev: []int{0, 1}, keys: []string{"name1", "name2"}},
			{text: "When did {o} adopt {name1}?", kind: KindTemporal, ev: []int{0}, keys: []string{"name1"}},
			{text: "Which animal did {o} bring home most recently?", kind: KindSingleHop, ev: []int{1}, keys: []string{"pet2"}},
		},
	},
	{
		id: "job",
		options: []option{
			opt("job1", "barista", "place1", "a café downtown", "job2", "junior accountant", "place2", "a tax firm"),
			opt("job1", "sales assistant", "place1", "a bookshop", "job2", "librarian", "place2", "the city library"),
			opt("job1", "line cook", "place1", "an Italian restaurant", "job2", "head chef", "place2", "a hotel kitchen"),
			opt("job1", "receptionist", "place1", "a dental clinic", "job2", "dental hygienist", "place2", "the same clinic"),
			opt("job1", "delivery driver", "place1", "a courier company", "job2", "dispatcher", "place2", "the courier's head office"),
		},
		stages: []stage{
			{lines: []line{
				x("How's work treating you these days, {o}?"),
				oe("Same old. I'm still a {job1} at {place1}, lots of early shifts."),
				x("Early shifts are brutal. At least you get your afternoons free."),
			}},
			{lines: []line{
				oe("I have news, {x}! I handed in my notice and started as a {job2} at {place2} on Monday."),
				x("No way! Congratulations, {o}, that's a huge step."),
				o("Thanks! I'm nervous but really excited."),
			}},
		},
		followup: []line{
			x("How's the new job going, {o}?"),
			o("Busy! I'm still learning where everything is, but people are nice."),
		},
		both: &qt{text: "Where do {a} and {b} work now?", ev: []int{1}, keys: []string{"place2"}, para: true},
		questions: []qt{
			{text: "What is {o}'s current job?", kind: KindSingleHop, ev: []int{1}, keys: []string{"job2"}, para: true, adv: true},
			{text: "What did {o} do for a living before the new position?", kind: KindTemporal, ev: []int{0}, keys: []string{"job1"}, para: true},
			{text: "How has {o}'s career changed over the past months?", kind: KindMultiHop, ev: []int{0, 1}, keys: []string{"job1", "job2"}, para: true},
		},
	},
	{
		id: "move",
		options: []option{
			opt("city1", "Leeds", "city2", "Lisbon"),
			opt("city1", "Denver", "city2", "Montreal"),
			opt("city1", "Austin", "city2", "Dublin"),
			opt("city1", "Manchester", "city2", "Melbourne"),
			opt("city1", "Chicago", "city2", "Osaka"),
		},
		stages: []stage{
			{lines: []line{
				x("Do you still like it there, {o}?"),
				oe("I love {city1}, I've been here six years. The food scene is amazing."),
				x("I really need to visit you sometime!"),
			}},
			{lines: []line{
				oe("The boxes are finally unpacked! We officially live in {city2} now."),
				x("Wow, {o}, you actually did it! How does it feel to be abroad?"),
				o("Surreal. I keep getting lost, but the views from our flat are incredible."),
			}},
		},
		followup: []line{
			x("Are you settling in okay over there, {o}?"),
			o("Slowly! I found a bakery I love, so that's a start."),
		},
		both: &qt{text: "Which cities do {a} and {b} live in now?", ev: []int{1}, keys: []string{"city2"}},
		questions: []qt{
			{text: "Where does {o} live now?", kind: KindSingleHop, ev: []int{1}, keys: []string{"city2"}, adv: true},
			{text: "Which country did {o} relocate to?", kind: KindOpenDomain, ev: []int{1}, keys: []string{"city2"}, para: true},
			{text: "Which city did {o} leave behind?", kind: KindTemporal, ev: []int{0}, keys: []string{"city1"}, para: true},
		},
	},
	{
		id: "race",
		options: []option{
			opt("race", "half marathon", "rtime", "two hours and five minutes", "where", "along the river"),
			opt("race", "10K", "rtime", "fifty-two minutes", "where", "through the park"),
			opt("race", "charity 5K", "rtime", "twenty-nine minutes", "where", "around the lake"),
			opt("race", "marathon", "rtime", "four hours and ten minutes", "where", "across the city"),
			opt("race", "trail race", "rtime", "an hour and a half", "where", "up in the hills"),
		},
		stages: []stage{{when: "yesterday", lines: []line{
			oe("My legs are dead, {x}. I ran the {race} {where} yesterday and finished in {rtime}!"),
			x("Way to go, {o}! That's a great time."),
			o("I was so happy to see the finish line. Never again... until the next one."),
		}}},
		both: &qt{text: "Which races did {a} and {b} finish?", ev: []int{0}, keys: []string{"race"}},
		questions: []qt{
			{text: "When did {o} run the {race}?", kind: KindTemporal, ev: []int{0}, keys: []string{"race"}, adv: true},
			{text: "What was {o}'s finishing time in the race?", kind: KindSingleHop, ev: []int{0}, keys: []string{"rtime"}},
			{text: "What did {o} do {window}?", kind: KindTemporal, ev: []int{0}, keys: []string{"race"}, para: true},
		},
	},
	{
		id: "books",
		options: []option{
			opt("book1", "The Midnight Library", "author1", "Matt Haig", "book2", "Project Hail Mary", "author2", "Andy Weir"),
			opt("book1", "Educated", "author1", "Tara Westover", "book2", "Circe", "author2", "Madeline Miller"),
			opt("book1", "The Martian", "author1", "Andy Weir", "book2", "Little Fires Everywhere", "author2", "Celeste Ng"),
			opt("book1", "Pachinko", "author1", "Min Jin Lee", "book2", "Dune", "author2", "Frank Herbert"),
			opt("book1", "Becoming", "author1", "Michelle Obama", "book2", "The Hobbit", "author2", "Tolkien"),
		},
		stages: []stage{
			{lines: []line{
				x("Read anything good lately, {o}?"),
				oe("I just finished {book1} by {author1}. I cried at the end, no shame."),
				x("I've heard so much about that one. Adding it to my list!"),
			}},
			{lines: []line{
				oe("I stayed up until 2am finishing {book2}. {author2} is a genius."),
				x("Ha, {o}, that's the best kind of tired."),
			}},
		},
		both: &qt{text: "Which novels have moved {a} and {b} to tears?", ev: []int{0}, keys: []string{"book1"}, para: true},
		questions: []qt{
			{text: "Which books has {o} finished recently?", kind: KindMultiHop, ev: []int{0, 1}, keys: []string{"book1", "book2"}, adv: true},
			{text: "Who wrote the book that made {o} cry?", kind: KindSingleHop, ev: []int{0}, keys: []string{"author1"}},
			{text: "Which book did {o} stay up late finishing?", kind: KindSingleHop, ev: []int{1}, keys: []string{"book2"}},
		},
	},
	{
		id: "trip",
		options: []option{
			opt("place", "Kyoto", "act", "saw a dozen temples and ate way too much ramen"),
			opt("place", "the Amalfi Coast", "act", "swam every morning and ate lemon everything"),
			opt("place", "Reykjavik", "act", "soaked in hot springs and chased the northern lights"),
			opt("place", "Marrakesh", "act", "got lost in the souks and drank gallons of mint tea"),
			opt("place", "Banff", "act", "hiked around turquoise lakes and saw two elk"),
		},
		stages: []stage{{when: "yesterday", lines: []line{
			oe("We just got back from {place} yesterday! We {act}."),
			x("That sounds like a dream, {o}. Did you take lots of photos?"),
			o("Hundreds. I'll send you the best ones."),
		}}},
		both: &qt{text: "Where did {a} and {b} each go on holiday?", ev: []int{0}, keys: []string{"place"}, para: true},
		questions: []qt{
			{text: "Where did {o} just get back from?", kind: KindSingleHop, ev: []int{0}, keys: []string{"place"}, adv: true},
			{text: "Which country was {o}'s recent getaway in?", kind: KindOpenDomain, ev: []int{0}, keys: []string{"place"}, para: true},
			{text: "Where was {o} {window}?", kind: KindTemporal, ev: []int{0}, keys: []string{"place"}, para: true},
		},
	},
	{
		id: "class",
		options: []option{
			opt("class", "pottery class", "thing", "a wonky little bowl").with(
				qt{text: "Would {o} know what a kiln is for?", kind: KindOpenDomain, ev: []int{0}, keys: []string{"class"}, para: true}),
			opt("class", "watercolour class", "thing", "a painting of the harbour"),
			opt("class", "woodworking class", "thing", "a small spice rack"),
			opt("class", "jewellery-making class", "thing", "a pair of silver earrings"),
			opt("class", "sewing class", "thing", "a tote bag").with(
				qt{text: "Could {o} fix a torn shirt?", kind: KindOpenDomain, ev: []int{0}, keys: []string{"class"}, para: true}),
		},
		stages: []stage{{lines: []line{
			oe("I signed up for a {class} at the community center, and this week I made {thing}!"),
			x("That's amazing, {o}! Send me a picture?"),
			o("Only if you promise not to laugh."),
		}}},
		followup: []line{
			x("Are you still going to your {class}, {o}?"),
			o("Every Thursday. It's the best part of my week."),
		},
		both: &qt{text: "What classes are {a} and {b} taking at the community center?", ev: []int{0}, keys: []string{"class"}},
		questions: []qt{
			{text: "What creative hobby did {o} take up?", kind: KindSingleHop, ev: []int{0}, keys: []string{"class"}, para: true, adv: true},
			{text: "What did {o} make at the {class}?", kind: KindSingleHop, ev: []int{0}, keys: []string{"thing"}},
		},
	},
	{
		id: "niece",
		options: []option{
			opt("rel", "sister", "sib", "Anna", "baby", "Rose"),
			opt("rel", "brother", "sib", "Tom", "baby", "Ivy"),
			opt("rel", "sister", "sib", "Lucy", "baby", "Maya"),
			opt("rel", "brother", "sib", "Daniel", "baby", "Sophie"),
			opt("rel", "sister", "sib", "Hannah", "baby", "Ella"),
		},
		stages: []stage{{when: "this morning", lines: []line{
			oe("My {rel} {sib} had a baby girl this morning! They called her {baby}."),
			x("Oh, congratulations to the whole family, {o}! {baby} is a lovely name."),
			o("I can't wait to meet her this weekend."),
		}}},
		both: &qt{text: "Which babies were born in the families of {a} and {b}?", ev: []int{0}, keys: []string{"baby"}},
		questions: []qt{
			{text: "What is the name of {o}'s niece?", kind: KindSingleHop, ev: []int{0}, keys: []string{"baby"}, para: true, adv: true},
			{text: "When was {o}'s niece born?", kind: KindTemporal, ev: []int{0}, keys: []string{"baby"}, para: true},
			{text: "Who had a baby in {o}'s family?", kind: KindSingleHop, ev: []int{0}, keys: []string{"sib"}},
		},
	},
	{
		id: "allergy",
		options: []option{
			opt("allergen", "shellfish", "food", "shrimp tacos"),
			opt("allergen", "peanuts", "food", "satay skewers"),
			opt("allergen", "kiwi", "food", "fruit salad"),
			opt("allergen", "gluten", "food", "fresh bread"),
			opt("allergen", "sesame", "food", "hummus"),
		},
		stages: []stage{{lines: []line{
			x("You sound tired, {o}. Everything okay?"),
			oe("Long week. The doctor confirmed I'm allergic to {allergen}, so no more {food} for me."),
			x("Oh no, I know how much you love {food}. I'm sorry."),
		}}},
		both: &qt{text: "What are {a} and {b} allergic to?", ev: []int{0}, keys: []string{"allergen"}},
		questions: []qt{
			{text: "What is {o} allergic to?", kind: KindSingleHop, ev: []int{0}, keys: []string{"allergen"}, adv: true},
			{text: "What should {o} avoid eating?", kind: KindSingleHop, ev: []int{0}, keys: []string{"allergen"}, para: true},
		},
	},
	{
		id: "car",
		options: []option{
			opt("car1", "old Honda Civic", "car2", "Toyota Prius", "color", "silver"),
			opt("car1", "rusty Ford Fiesta", "car2", "Mini Cooper", "color", "red"),
			opt("car1", "ancient Volvo", "car2", "Tesla Model 3", "color", "white"),
			opt("car1", "Subaru Forester", "car2", "Jeep Wrangler", "color", "green"),
			opt("car1", "VW Golf", "car2", "Kia Niro", "color", "blue"),
		},
		stages: []stage{
			{lines: []line{
				oe("My {car1} broke down on the motorway again. I'm so done with that thing."),
				x("Ugh, {o}, that's the third time this year, right?"),
				o("Fourth. The mechanic knows me by name."),
			}},
			{lines: []line{
				oe("I finally did it, {x}: I traded in the old car for a {color} {car2}."),
				x("Fancy! Road trip soon, {o}?"),
				o("Absolutely, as soon as the weather turns."),
			}},
		},
		both: &qt{text: "What do {a} and {b} drive these days?", ev: []int{1}, keys: []string{"car2"}, para: true},
		questions: []qt{
			{text: "What does {o} drive these days?", kind: KindSingleHop, ev: []int{1}, keys: []string{"car2"}, para: true, adv: true},
			{text: "What happened to {o}'s old car on the motorway?", kind: KindTemporal, ev: []int{0}, keys: []string{"car1"}},
			{text: "What colour is {o}'s new car?", kind: KindSingleHop, ev: []int{1}, keys: []string{"color"}},
		},
	},
	{
		id: "volunteer",
		options: []option{
			opt("vplace", "animal shelter", "vtask", "walking the dogs"),
			opt("vplace", "food bank", "vtask", "packing boxes"),
			opt("vplace", "children's hospital", "vtask", "reading stories to the kids"),
			opt("vplace", "botanic garden", "vtask", "weeding the flower beds"),
			opt("vplace", "homeless shelter", "vtask", "serving breakfast"),
		},
		stages: []stage{{lines: []line{
			x("What do you get up to on weekends, {o}?"),
			oe("I volunteer at the {vplace} every Saturday morning, mostly {vtask}."),
			x("That's really kind of you. I should do something like that."),
		}}},
		both: &qt{text: "Where do {a} and {b} volunteer?", ev: []int{0}, keys: []string{"vplace"}},
		questions: []qt{
			{text: "Where does {o} volunteer?", kind: KindSingleHop, ev: []int{0}, keys: []string{"vplace"}, adv: true},
			{text: "How does {o} give back to the community?", kind: KindSingleHop, ev: []int{0}, keys: []string{"vplace"}, para: true},
		},
	},
	{
		id: "dish",
		options: []option{
			opt("dish", "my grandmother's lasagna"),
			opt("dish", "spicy lamb biryani"),
			opt("dish", "fish tacos with mango salsa"),
			opt("dish", "mushroom risotto"),
			opt("dish", "chicken katsu curry"),
		},
		stages: []stage{{lines: []line{
			x("I'm cooking tonight and I'm out of ideas. What's your favourite food, {o}?"),
			oe("Easy: {dish}. I could have it every single day."),
			x("Noted! Maybe I'll try making it."),
		}}},
		both: &qt{text: "What are the favourite foods of {a} and {b}?", ev: []int{0}, keys: []string{"dish"}, para: true},
		questions: []qt{
			{text: "What is {o}'s favourite food?", kind: KindSingleHop, ev: []int{0}, keys: []string{"dish"}, para: true, adv: true},
		},
	},
	{
		id: "kid",
		options: []option{
			opt("kid", "Emma", "child", "daughter", "sport", "swimming"),
			opt("kid", "Leo", "child", "son", "sport", "karate"),
			opt("kid", "Noah", "child", "son", "sport", "football"),
			opt("kid", "Mia", "child", "daughter", "sport", "gymnastics"),
			opt("kid", "Ben", "child", "son", "sport", "tennis"),
		},
		stages: []stage{{lines: []line{
			oe("{kid} started {sport} lessons this month and won't stop talking about it."),
			x("That's adorable, {o}! Kids need something like that."),
			o("Honestly, it also tires {kid} out, which I love."),
		}}},
		followup: []line{
			x("Is {kid} still loving {sport}, {o}?"),
			o("Obsessed. It's all we hear about at dinner."),
		},
		both: &qt{text: "What lessons did the kids of {a} and {b} start?", ev: []int{0}, keys: []string{"sport"}},
		questions: []qt{
			{text: "What sport does {o}'s {child} do?", kind: KindSingleHop, ev: []int{0}, keys: []string{"sport"}, para: true, adv: true},
			{text: "What activity did {kid} start this month?", kind: KindSingleHop, ev: []int{0}, keys: []string{"sport"}},
		},
	},
	{
		id: "garden",
		options: []option{
			opt("plants", "tomatoes, basil and sunflowers"),
			opt("plants", "strawberries and courgettes"),
			opt("plants", "chillies and mint"),
			opt("plants", "potatoes and runner beans"),
			opt("plants", "lavender and roses"),
		},
		stages: []stage{{lines: []line{
			oe("I spent the whole weekend in the backyard planting {plants}."),
			x("Look at you with a green thumb, {o}!"),
			o("Let's see if anything survives the slugs."),
		}}},
		both: &qt{text: "What are {a} and {b} growing in their gardens?", ev: []int{0}, keys: []string{"plants"}, para: true},
		questions: []qt{
			{text: "What did {o} spend the weekend planting?", kind: KindSingleHop, ev: []int{0}, keys: []string{"plants"}, adv: true},
		},
	},
	{
		id: "concert",
		options: []option{
			opt("band", "Coldplay", "venue", "the stadium"),
			opt("band", "Arctic Monkeys", "venue", "the arena"),
			opt("band", "Taylor Swift", "venue", "Wembley"),
			opt("band", "a Fleetwood Mac tribute band", "venue", "a tiny pub"),
			opt("band", "Foo Fighters", "venue", "the festival"),
		},
		stages: []stage{{when: "last night", lines: []line{
			oe("I saw {band} live at {venue} last night and my voice is completely gone."),
			x("Jealous! Was it as good as you hoped, {o}?"),
			o("Better. I'd go again tomorrow."),
		}}},
		both: &qt{text: "Which concerts did {a} and {b} go to?", ev: []int{0}, keys: []string{"band"}, para: true},
		questions: []qt{
			{text: "Which band did {o} see live?", kind: KindSingleHop, ev: []int{0}, keys: []string{"band"}, adv: true},
			{text: "When did {o} go to the gig at {venue}?", kind: KindTemporal, ev: []int{0}, keys: []string{"band"}},
		},
	},
	{
		id: "course",
		options: []option{
			opt("field", "web development"),
			opt("field", "data analysis"),
			opt("field", "graphic design"),
			opt("field", "bookkeeping"),
			opt("field", "psychology"),
		},
		stages: []stage{
			{lines: []line{
				oe("Don't laugh, but I enrolled in an online course in {field}. Classes are on Tuesday nights."),
				x("Why would I laugh? That's great, {o}!"),
			}},
			{when: "this morning", lines: []line{
				oe("I passed the final exam of my {field} course this morning!"),
				x("Way to go, {o}! All those Tuesday nights paid off."),
				o("I still can't believe it. Celebrating with pizza tonight."),
			}},
		},
		both: &qt{text: "What are {a} and {b} studying online?", ev: []int{0}, keys: []string{"field"}},
		questions: []qt{
			{text: "What online course did {o} enrol in?", kind: KindSingleHop, ev: []int{0}, keys: []string{"field"}, adv: true},
			{text: "When did {o} pass the {field} exam?", kind: KindTemporal, ev: []int{1}, keys: []string{"field"}},
			{text: "How long did it take {o} to get from enrolling to passing the {field} course?", kind: KindTemporal, ev: []int{0, 1}, keys: []string{"field"}},
		},
	},
	{
		id: "fear",
		options: []option{
			opt("fear", "spiders"),
			opt("fear", "deep water"),
			opt("fear", "heights"),
			opt("fear", "flying"),
			opt("fear", "clowns"),
		},
		stages: []stage{{lines: []line{
			x("What's something that really scares you, {o}?"),
			oe("{^fear}, without a doubt. I know it's silly but I can't help it."),
			x("It's not silly at all, everyone has something."),
		}}},
		both: &qt{text: "What are {a} and {b} afraid of?", ev: []int{0}, keys: []string{"fear"}, para: true},
		questions: []qt{
			{text: "What is {o} afraid of?", kind: KindSingleHop, ev: []int{0}, keys: []string{"fear"}, para: true, adv: true},
		},
	},
	{
		id: "show",
		options: []option{
			opt("show1", "The Crown", "show2", "Succession"),
			opt("show1", "Stranger Things", "show2", "The Last of Us"),
			opt("show1", "Bridgerton", "show2", "Ted Lasso"),
			opt("show1", "The Office", "show2", "Severance"),
			opt("show1", "Grey's Anatomy", "show2", "The Bear"),
		},
		stages: []stage{
			{lines: []line{
				oe("I'm completely hooked on {show1}, I watched five episodes last night."),
				x("Careful, {o}, that's how they get you."),
			}},
			{lines: []line{
				x("Still binging {show1}, {o}?"),
				oe("No, I gave up on {show1}. I've switched to {show2} and it's so much better."),
				x("Ooh, I keep hearing good things about that one."),
			}},
		},
		both: &qt{text: "Which shows have {a} and {b} switched to?", ev: []int{1}, keys: []string{"show2"}},
		questions: []qt{
			{text: "What series is {o} into these days?", kind: KindSingleHop, ev: []int{1}, keys: []string{"show2"}, para: true, adv: true},
			{text: "Which show did {o} switch away from?", kind: KindTemporal, ev: []int{1}, keys: []string{"show1"}},
		},
	},
	{
		id: "birthday",
		options: []option{
			opt("friend", "Jess", "cake", "lemon drizzle cake"),
			opt("friend", "Marco", "cake", "chocolate fudge cake"),
			opt("friend", "Priti", "cake", "carrot cake"),
			opt("friend", "Ollie", "cake", "red velvet cake"),
			opt("friend", "Sara", "cake", "tiramisu"),
		},
		stages: []stage{{when: "on Saturday", lines: []line{
			oe("My birthday dinner on Saturday was perfect. {friend} even baked me a {cake}!"),
			x("Happy belated birthday, {o}! I'm sorry I missed it."),
			o("Don't worry, I saved you a slice."),
		}}},
		both: &qt{text: "Who baked for the birthdays of {a} and {b}?", ev: []int{0}, keys: []string{"friend"}},
		questions: []qt{
			{text: "What kind of dessert did {o} get for the birthday?", kind: KindSingleHop, ev: []int{0}, keys: []string{"cake"}, adv: true},
			{text: "When did {o} celebrate turning a year older?", kind: KindTemporal, ev: []int{0}, keys: []string{"friend"}, para: true},
		},
	},
	{
		id: "injury",
		options: []option{
			opt("part", "ankle", "game", "basketball"),
			opt("part", "wrist", "game", "volleyball"),
			opt("part", "knee", "game", "five-a-side"),
			opt("part", "shoulder", "game", "squash"),
			opt("part", "calf", "game", "badminton"),
		},
		stages: []stage{{when: "on Sunday", lines: []line{
			oe("I sprained my {part} playing {game} on Sunday, so I'm hobbling around like a pirate."),
			x("Oh no! Rest up, {o}. Ice and elevation!"),
		}}},
		both: &qt{text: "Which injuries did {a} and {b} get from sports?", ev: []int{0}, keys: []string{"part"}, para: true},
		questions: []qt{
			{text: "How did {o} get hurt?", kind: KindSingleHop, ev: []int{0}, keys: []string{"game"}, para: true, adv: true},
			{text: "When did {o} sprain the {part}?", kind: KindTemporal, ev: []int{0}, keys: []string{"part"}},
		},
	},
	{
		id: "partner",
		options: []option{
			opt("pname", "Chris", "pjob", "firefighter"),
			opt("pname", "Alex", "pjob", "nurse"),
			opt("pname", "Jordan", "pjob", "architect"),
			opt("pname", "Sam", "pjob", "chef"),
			opt("pname", "Robin", "pjob", "primary school teacher"),
		},
		stages: []stage{{lines: []line{
			x("Are you free for dinner next Friday, {o}?"),
			oe("Maybe! My partner {pname} is a {pjob}, so our schedules are a mess. I'll check."),
			x("No pressure, just let me know."),
		}}},
		both: &qt{text: "What do the partners of {a} and {b} do for a living?", ev: []int{0}, keys: []string{"pjob"}},
		questions: []qt{
			{text: "What does {o}'s partner do for a living?", kind: KindSingleHop, ev: []int{0}, keys: []string{"pjob"}, adv: true},
			{text: "Who is {o} in a relationship with?", kind: KindSingleHop, ev: []int{0}, keys: []string{"pname"}, para: true},
		},
	},
	{
		id: "diet",
		options: []option{
			opt("diet", "vegetarian", "reason", "after watching a documentary about farming"),
			opt("diet", "vegan", "reason", "mostly for my health"),
			opt("diet", "pescatarian", "reason", "because red meat was making me sluggish"),
			opt("diet", "vegetarian", "reason", "because my kids asked me to"),
			opt("diet", "vegan", "reason", "for the planet, really"),
		},
		stages: []stage{{lines: []line{
			oe("Small update: I went {diet} a month ago, {reason}."),
			x("Good for you, {o}! Is it hard?"),
			o("The first week was, now I barely miss it."),
		}}},
		both: &qt{text: "Which of {a} and {b} eat meat?", ev: []int{0}, keys: []string{"diet"}, para: true},
		questions: []qt{
			{text: "Would {o} eat a beef burger?", kind: KindOpenDomain, ev: []int{0}, keys: []string{"diet"}, para: true, adv: true},
			{text: "Why did {o} go {diet}?", kind: KindSingleHop, ev: []int{0}, keys: []string{"diet"}},
		},
	},
	{
		id: "language",
		options: []option{
			opt("lang", "Spanish"),
			opt("lang", "Japanese"),
			opt("lang", "Italian"),
			opt("lang", "Korean"),
			opt("lang", "German"),
		},
		stages: []stage{{lines: []line{
			oe("I've been learning {lang} with an app every morning before work."),
			x("That's so cool, {o}! How far along are you?"),
			o("I can order coffee and ask for the toilet, so the essentials."),
		}}},
		followup: []line{
			x("How's the {lang} going, {o}?"),
			o("Slowly! The grammar is humbling."),
		},
		both: &qt{text: "Which languages are {a} and {b} learning?", ev: []int{0}, keys: []string{"lang"}},
		questions: []qt{
			{text: "Which language is {o} studying?", kind: KindSingleHop, ev: []int{0}, keys: []string{"lang"}, para: true, adv: true},
		},
	},
	{
		id: "club",
		options: []option{
			opt("club", "grief support group"),
			opt("club", "chess club"),
			opt("club", "choir rehearsal"),
			opt("club", "climbing club"),
			opt("club", "photography club"),
		},
		stages: []stage{{when: "yesterday", lines: []line{
			oe("I finally went to my first {club} meeting yesterday. Everyone was so welcoming."),
			x("I'm really proud of you for going, {o}."),
			o("Thanks, it took me months to work up the courage."),
		}}},
		both: &qt{text: "Which clubs or groups did {a} and {b} join?", ev: []int{0}, keys: []string{"club"}},
		questions: []qt{
			{text: "When did {o} go to the {club}?", kind: KindTemporal, ev: []int{0}, keys: []string{"club"}, adv: true},
			{text: "Which club or group did {o} go to for the first time {window}?", kind: KindTemporal, ev: []int{0}, keys: []string{"club"}},
		},
	},
}

// smallTalkPools are drawn once per block of small talk.
var smallTalkPools = map[string][]string{
	"weather":  {"pouring rain", "weirdly warm", "freezing cold", "grey and windy", "sunny but chilly"},
	"chore":    {"did laundry", "cleaned the kitchen", "sorted out the garage", "did the grocery run", "tidied the spare room"},
	"food":     {"leftover pasta", "a cheese toastie", "instant noodles", "a big salad", "scrambled eggs on toast"},
	"dinner":   {"a veggie chilli", "homemade pizza", "a Thai green curry", "shepherd's pie", "stir-fried noodles"},
	"drink":    {"a cup of tea", "a hot chocolate", "a glass of wine", "a cold beer", "some peppermint tea"},
	"outing":   {"a walk by the canal", "the farmers market", "a movie", "brunch with friends", "the flea market"},
	"song":     {"an old Abba song", "some advert jingle", "a song from the radio", "the theme tune of a cartoon", "a Beatles song"},
	"topic":    {"ancient history", "true crime", "space exploration", "cooking", "how the economy works"},
	"cuisine":  {"Vietnamese", "Lebanese", "Mexican", "Korean", "Greek"},
	"dish":     {"pho", "falafel wrap", "burrito", "bibimbap", "souvlaki"},
	"found":    {"twenty quid in an old coat", "my old school tie", "a birthday card from 2015", "three odd socks", "my missing headphones"},
	"snack":    {"crisps", "a salad", "dessert", "drinks", "bread"},
	"newsitem": {"whale in the harbour", "new tram line", "power cut downtown", "record heatwave", "lottery winner in town"},
}

var greetings = []talk{
	{o("Hey {r}! Long time no talk. How are you?"), x("Hi {s}! I'm good, just a busy week. You?"), o("Can't complain, honestly.")},
	{o("Morning {r}! Got a minute to chat?"), x("Always for you, {s}. What's up?")},
	{o("Hi {r}, happy {weekday}!"), x("Happy {weekday}, {s}! How's your week going?"), o("Better now that it's nearly over.")},
	{o("Hey {r}, how have you been?"), x("Hey {s}! Pretty good, thanks. It's been a while!")},
	{o("{r}! I have so much to tell you."), x("Oh, this sounds good. Go on, {s}!")},
}

var goodbyes = []talk{
	{o("Anyway, I should get going. Talk soon, {r}!"), x("Bye {s}! Take care.")},
	{o("I have to run, dinner's ready. Chat later?"), x("Definitely. Enjoy, {s}!")},
	{o("It was so good catching up, {r}."), x("Same here, {s}. Let's not leave it so long next time!")},
	{o("Okay, bedtime for me. Night, {r}!"), x("Good night, {s}! Sleep well.")},
}

var smallTalks = []talk{
	{o("How was your weekend, {r}?"), x("Pretty quiet. I mostly {chore} and watched TV."), o("Sounds like the perfect weekend to me.")},
	{o("It's been {weather} all week here."), x("Same here. I've barely left the house.")},
	{o("Have you eaten yet? I'm starving."), x("Just had {food}. Nothing fancy, but it did the job.")},
	{o("Work was exhausting today."), x("Sorry to hear that, {s}. Want to talk about it?"), o("Nah, I just need {drink} and an early night.")},
	{o("Did you see the news about the {newsitem}?"), x("I did! Wild, right?"), o("This town never gets boring.")},
	{o("Any plans for the weekend, {r}?"), x("Not really, maybe {outing} if the weather holds."), o("Nice, send me a picture!")},
	{o("I'm trying to drink more water this week."), x("Good luck, {s}! I always forget.")},
	{o("My phone screen cracked again."), x("Oh no, again? You need a better case."), o("I know, I know.")},
	{o("I can't believe it's already {month}."), x("Right? This year is flying by.")},
	{o("I've had {song} stuck in my head all day."), x("Ha! Thanks, now it's going to be stuck in mine.")},
	{o("How's your family doing, {r}?"), x("Everyone's good, thanks for asking. My mum says hi!"), o("Say hi back from me!")},
	{o("I made {dinner} for dinner and it actually turned out well."), x("Look at you, {s}! Chef of the year.")},
	{o("Do you have any podcast recommendations?"), x("I've been enjoying one about {topic} lately."), o("Ooh, I'll give it a listen.")},
	{o("I'm so behind on emails."), x("Me too. Inbox zero is a myth.")},
	{o("We should catch up properly soon, {r}."), x("Definitely! Coffee next week?"), o("It's a date.")},
	{o("I finally cleared out my wardrobe."), x("How does it feel?"), o("Amazing. I found {found} in there!")},
	{o("The neighbours are having a party again."), x("On a {weekday}? Bold.")},
	{o("I think I'm coming down with a cold."), x("Drink lots of tea and rest."), o("Yes, doctor.")},
	{o("Traffic was a nightmare this morning."), x("Was there an accident?"), o("Roadworks, as always.")},
	{o("I tried that new {cuisine} place near my office."), x("Was it any good?"), o("The {dish} was great, the service not so much.")},
	{o("I went for a long walk by the river this morning."), x("That sounds lovely. I need to get outside more.")},
	{o("My houseplants are dying again."), x("Are you overwatering them?"), o("Probably. I love them too much.")},
	{o("Have you started anything new on TV?"), x("Not really, I'm rewatching old favourites."), o("Comfort viewing, the best kind.")},
	{o("Thanks for listening the other day, {r}. It really helped."), x("Anytime, {s}. That's what friends are for.")},
	{o("I'm thinking of getting a haircut."), x("Go for it! Something bold?"), o("Maybe just a trim, let's not get crazy.")},
	{o("I bought way too many groceries again."), x("Ha, classic. Meal prep time?"), o("That's the plan, anyway.")},
	{o("My cousin keeps sending me memes at 3am."), x("Honestly, that's love.")},
	{o("I finally booked a dentist appointment."), x("Proud of you, {s}! Very grown up.")},
	{o("Did you sleep well?"), x("Not really, I kept waking up."), o("Try no screens before bed, it helps me.")},
	{o("I've been trying to read more before bed."), x("Any good finds?"), o("I've been on the same chapter for a week, to be honest.")},
	{o("I'm proud of you, you know that, {r}?"), x("That means a lot, {s}. Thank you.")},
	{o("Work is sending me to a conference next month."), x("Ooh, where?"), o("Somewhere with bad coffee, probably.")},
	{o("Are you still coming to the barbecue?"), x("Wouldn't miss it! Should I bring anything?"), o("Just yourself and maybe some {snack}.")},
	{o("The gym was packed tonight."), x("Everyone's getting fit for summer."), o("Or pretending to, like me.")},
	{o("I spilled coffee all over my keyboard today."), x("Oh no! Did it survive?"), o("Barely. The E key sticks now.")},
	{o("Do you ever just want to move to a cabin in the woods?"), x("Every single Monday.")},
}
