package tutor

// The vocabulary of course search: what students and calendars abbreviate,
// and what subject codes mean. Read-only tables; search.go says how the
// ranking uses them.

// subjectNames are the names of the subject codes of the catalogues the
// tutor imports (the Langara catalogue and the SFU outlines, whose files
// give codes but not names), from the institutions' calendars. A course's
// subject name is indexed as a field of its own, so that "computer
// science" finds CPSC courses and "psychology" PSYC ones even where the
// title does not say so. A code missing here (a new subject) is still
// found by its code. Where one code means different things at the two
// institutions, both names are given.
var subjectNames = map[string]string{
	"ABST": "Aboriginal Studies", "ACMA": "Actuarial Mathematics", "AHIS": "Art History",
	"ALS": "Academic Legal Studies", "ANTH": "Anthropology", "APMA": "Applied Mathematics",
	"APPL": "Applied Planning", "APSC": "Applied Science Engineering", "ARAB": "Arabic",
	"ARCH": "Archaeology", "ASIA": "Asian Studies", "ASTR": "Astronomy",
	"BCAP": "Business Computer Applications", "BINF": "Bioinformatics", "BIOL": "Biology",
	"BISC": "Biological Sciences Biology", "BPAC": "Arts and Culture Management",
	"BPK": "Biomedical Physiology and Kinesiology", "BUS": "Business Administration",
	"BUSM": "Business Management", "CA": "Contemporary Arts", "CENV": "Environment Co-op",
	"CHEM": "Chemistry", "CHIN": "Chinese", "CJUS": "Criminal Justice",
	"CLST": "Classical Studies", "CMNS": "Communication", "CMPT": "Computing Science",
	"CNST": "Canadian Studies", "COGS": "Cognitive Science", "COOP": "Co-operative Education",
	"CPSC": "Computer Science", "CRIM": "Criminology", "CSIS": "Computer Information Systems",
	"DANA": "Data Analytics", "DASH": "Applied Social Sciences and Humanities",
	"DATA": "Data Science", "DIAL": "Dialogue", "DMED": "Digital Media", "DSGN": "Design",
	"EASC": "Earth Sciences", "ECED": "Early Childhood Education", "ECO": "Ecological Restoration",
	"ECON": "Economics", "EDAS": "Education Assistant", "EDPR": "Education Professional",
	"EDUC": "Education", "ENGL": "English", "ENSC": "Engineering Science", "ENV": "Environment",
	"ENVS": "Environmental Studies", "EVSC": "Environmental Science", "EXCH": "Exchange",
	"EXPE": "Career Experience", "FAL": "Foundations of Academic Literacy",
	"FAN": "Foundations of Analytical and Quantitative Reasoning", "FASS": "Arts and Social Sciences",
	"FEP": "Exchange", "FINA": "Fine Arts", "FLMA": "Film Arts", "FMGT": "Financial Management Accounting",
	"FMST": "Family Studies", "FREN": "French", "FSCA": "Field School Canada",
	"FSIE": "Field School International", "FSRV": "Food Service", "GA": "Global Asia",
	"GEOG": "Geography", "GEOL": "Geology", "GERM": "German", "GERO": "Gerontology",
	"GRAD": "Graduate Studies", "GREK": "Greek", "GRK": "Greek",
	"GSWS": "Gender Sexuality and Women's Studies", "HCAS": "Health Care Assistant",
	"HIST": "History", "HSCI": "Health Sciences", "HUM": "Humanities",
	"IAT": "Interactive Arts and Technology", "IEWK": "International Education",
	"INDG": "Indigenous Studies", "INLG": "Indigenous Languages", "INS": "Indigenous Studies",
	"INST": "Environment Institute", "INTB": "International Business", "IS": "International Studies",
	"ITAL": "Italian", "JAPN": "Japanese", "JOUR": "Journalism", "KINS": "Kinesiology",
	"LAMS": "Latin American Studies", "LATN": "Latin", "LBRL": "Liberal Arts Co-op",
	"LBST": "Labour Studies", "LIBR": "Library and Information Technology", "LING": "Linguistics",
	"LS": "Liberal Studies", "MACM": "Mathematics and Computing Science", "MARK": "Marketing",
	"MASC": "Marine Science", "MATH": "Mathematics", "MBB": "Molecular Biology and Biochemistry",
	"MSE": "Mechatronic Systems Engineering", "NEUR": "Neuroscience", "NURS": "Nursing",
	"NUSC": "Nuclear Science", "NUTR": "Nutrition", "ONC": "Oncology", "PCCN": "Peace and Conflict Studies",
	"PERS": "Persian", "PHED": "Physical Education", "PHIL": "Philosophy", "PHOT": "Photography",
	"PHYS": "Physics", "PLAN": "Planning", "PLCY": "Public Policy", "POL": "Political Science",
	"POLI": "Political Science", "PORT": "Portuguese", "PSYC": "Psychology", "PUB": "Publishing",
	"PUBL": "Publishing", "PUNJ": "Punjabi", "RECR": "Recreation",
	"RELS": "Religious Studies", "REM": "Resource and Environmental Management",
	"RISK": "Risk Management Actuarial", "SA": "Sociology and Anthropology", "SCI": "Science",
	"SCIE": "Science", "SD": "Sustainable Development", "SDA": "Social Data Analytics",
	"SEE": "Sustainable Energy Engineering", "SOCI": "Sociology", "SPAN": "Spanish",
	"SSRV": "Social Service Work", "STAT": "Statistics", "TEKX": "Technology Entrepreneurship",
	"THEA": "Theatre", "UGRAD": "Undergraduate Research", "URB": "Urban Studies",
	"WILX": "International Work Experience", "WL": "World Literature",
	"WMDD": "Web and Mobile App Design and Development", "WMST": "Women's Studies",
}

// searchAbbrevs are the words students and calendars shorten, each with
// what it stands for. A query word found here keeps its own meaning and
// gains the expansions (search.go: the first word of an expansion joins
// the query word's concept; the others are added as concepts of their
// own), down-weighted by rankParams.expansion. Keys are lower case, one
// word; several meanings are all listed ("eng": English, engineering).
var searchAbbrevs = map[string][]string{
	"intro":    {"introduction", "introductory", "introduce"},
	"101":      {"introduction", "introductory"},
	"calc":     {"calculus"},
	"precalc":  {"precalculus"},
	"stats":    {"statistics"},
	"stat":     {"statistics"},
	"prob":     {"probability"},
	"cs":       {"computer science", "computing science"},
	"compsci":  {"computer science", "computing science"},
	"comp":     {"computer", "computing"},
	"prog":     {"programming"},
	"psych":    {"psychology"},
	"psyc":     {"psychology"},
	"chem":     {"chemistry"},
	"biochem":  {"biochemistry"},
	"ochem":    {"organic chemistry"},
	"orgo":     {"organic chemistry"},
	"bio":      {"biology", "biological"},
	"micro":    {"microeconomics", "microbiology"},
	"macro":    {"macroeconomics"},
	"econ":     {"economics"},
	"phil":     {"philosophy"},
	"philo":    {"philosophy"},
	"lit":      {"literature"},
	"eng":      {"english", "engineering"},
	"engl":     {"english"},
	"acct":     {"accounting"},
	"acctg":    {"accounting"},
	"bus":      {"business"},
	"biz":      {"business"},
	"mgmt":     {"management"},
	"mktg":     {"marketing"},
	"fin":      {"finance", "financial"},
	"hist":     {"history"},
	"soc":      {"sociology", "social"},
	"socio":    {"sociology"},
	"anth":     {"anthropology"},
	"anthro":   {"anthropology"},
	"crim":     {"criminology"},
	"poli":     {"political", "politics"},
	"polisci":  {"political science"},
	"govt":     {"government"},
	"geo":      {"geography", "geology"},
	"geog":     {"geography"},
	"math":     {"mathematics"},
	"maths":    {"mathematics"},
	"alg":      {"algebra"},
	"trig":     {"trigonometry"},
	"diffeq":   {"differential equations"},
	"phys":     {"physics"},
	"astro":    {"astronomy"},
	"kin":      {"kinesiology"},
	"kines":    {"kinesiology"},
	"physio":   {"physiology"},
	"anat":     {"anatomy"},
	"comm":     {"communication"},
	"comms":    {"communication"},
	"enviro":   {"environmental", "environment"},
	"env":      {"environmental", "environment"},
	"ling":     {"linguistics"},
	"lang":     {"language"},
	"ai":       {"artificial intelligence"},
	"ml":       {"machine learning"},
	"db":       {"database"},
	"dbs":      {"database"},
	"os":       {"operating systems"},
	"oop":      {"object oriented programming"},
	"hci":      {"human computer interaction"},
	"ux":       {"user experience"},
	"esl":      {"english second language"},
	"gen":      {"general"},
	"adv":      {"advanced"},
	"lab":      {"laboratory"},
	"canadian": {"canada"},
	"canada":   {"canadian"},
	"1st":      {"first"},
	"2nd":      {"second"},
	"1":        {"i"},
	"2":        {"ii"},
	"3":        {"iii"},
	"4":        {"iv"},
}

// searchRelated are words calendars use for what a query word asks for
// without saying it: an introductory course is often "General Chemistry"
// or "Principles of Microeconomics", a calculus course speaks of
// derivatives and integrals. They join the query word's concept with the
// weight rankParams.related (below an abbreviation's expansion). Keys
// are stems, so "intro", "introduction" and "introductory" share theirs.
var searchRelated = map[string][]string{
	"intro":        {"fundamentals", "foundations", "principles", "basic", "elementary", "general", "beginners"},
	"introduct":    {"fundamentals", "foundations", "principles", "basic", "elementary", "general", "beginners"},
	"introductori": {"fundamentals", "foundations", "principles", "basic", "elementary", "general", "beginners"},
	"calculus":     {"derivative", "differentiation", "integral", "integration"},
	"calc":         {"derivative", "differentiation", "integral", "integration"},
	"program":      {"java", "python", "algorithm", "software"},
	"prog":         {"java", "python", "algorithm", "software"},
	"statist":      {"regression", "inference"},
	"stat":         {"regression", "inference"},
	"beginn":       {"elementary", "introductory"},
}

// searchPhrases are abbreviations of two words, read before the words'
// own: "comp sci" means computer science, not "comp" and "sci" apart.
var searchPhrases = map[string][]string{
	"comp sci":  {"computer science", "computing science"},
	"lin alg":   {"linear algebra"},
	"poli sci":  {"political science"},
	"diff eq":   {"differential equations"},
	"diff eqs":  {"differential equations"},
	"gen chem":  {"general chemistry"},
	"phys ed":   {"physical education"},
	"soc sci":   {"social science"},
	"data sci":  {"data science"},
	"bio chem":  {"biochemistry"},
	"stat mech": {"statistical mechanics"},
}

// searchCompounds are words that calendars also write as two ("Data
// Base Systems"): indexing a title or description, two adjacent words
// that make one of these count as the one word too.
var searchCompounds = map[string]bool{
	"database": true, "databases": true, "website": true, "websites": true, "online": true,
	"healthcare": true, "coursework": true, "lifespan": true, "worldwide": true, "newsroom": true,
}

// searchLevels are the words of a query that ask for a year level:
// "first year psych" ranks first-year psychology courses above the
// others (by rankParams.levelBoost). They are not searched as words.
var searchLevels = map[string]int{
	"first year": 1, "1st year": 1, "year 1": 1, "year one": 1, "freshman": 1, "100 level": 1, "1000 level": 1,
	"second year": 2, "2nd year": 2, "year 2": 2, "year two": 2, "sophomore": 2, "200 level": 2, "2000 level": 2,
	"third year": 3, "3rd year": 3, "year 3": 3, "year three": 3, "300 level": 3, "3000 level": 3,
	"fourth year": 4, "4th year": 4, "year 4": 4, "year four": 4, "400 level": 4, "4000 level": 4,
}
