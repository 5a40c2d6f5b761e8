"""The sentence shapes the NLP extractor reads, each with the directed triples it must give (source -[TYPE]->
target, exactly as the sentence says it) and, where a wrong reading is easy, the triple it must not give."""

from __future__ import annotations

import pytest

from .conftest import triples

SHAPES = [
    # (shape, title, text, expected triples, forbidden triples)
    (
        "active verb",
        None,
        "Jane Smith founded Acme Corporation.",
        {("Jane Smith", "FOUNDED", "Acme Corporation")},
        {("Acme Corporation", "FOUNDED", "Jane Smith")},
    ),
    (
        "passive keeps its agent marker",
        None,
        "Acme Corporation was founded by Jane Smith in 1990.",
        {("Acme Corporation", "FOUNDED_BY", "Jane Smith"), ("Acme Corporation", "FOUNDED_IN", "1990")},
        {("Acme Corporation", "FOUNDED", "Jane Smith"), ("Jane Smith", "FOUNDED_BY", "Acme Corporation")},
    ),
    (
        "passive of a curated type",
        None,
        "Directive 2019-03 was superseded by Directive 2023-07.",
        {("Directive 2019-03", "SUPERSEDED_BY", "Directive 2023-07")},
        {("Directive 2019-03", "SUPERSEDES", "Directive 2023-07")},
    ),
    (
        "codes in names",
        None,
        "Incident IR-2023-14 caused Decision CAB-2023-31.",
        {("Incident IR-2023-14", "CAUSED", "Decision CAB-2023-31")},
        set(),
    ),
    (
        "phrasal verb with preposition",
        None,
        "Lars Eriksen reports to Priya Nair.",
        {("Lars Eriksen", "REPORTS_TO", "Priya Nair")},
        {("Priya Nair", "REPORTS_TO", "Lars Eriksen")},
    ),
    (
        "apposition with a relational noun",
        None,
        "Jan Solovej, the editor of the Journal of Physics, lives in Oslo.",
        {("Jan Solovej", "EDITOR_OF", "Journal of Physics"), ("Jan Solovej", "LIVES_IN", "Oslo")},
        set(),
    ),
    (
        "kinship apposition after a birthplace",
        None,
        "Sara Lee was born in Boston, Massachusetts, the only child of John Smith.",
        {("Sara Lee", "BORN_IN", "Boston"), ("Sara Lee", "CHILD_OF", "John Smith")},
        {("Massachusetts", "CHILD_OF", "John Smith"), ("Boston", "CHILD_OF", "John Smith")},
    ),
    (
        "a dated description with a participle clause",
        "Jump for Glory",
        "Jump for Glory is a 1937 British drama film directed by Raoul Walsh and starring Valerie Hobson.",
        {("Jump for Glory", "DIRECTED_BY", "Raoul Walsh"), ("Jump for Glory", "STARRING", "Valerie Hobson")},
        {("1937 British drama film", "DIRECTED_BY", "Raoul Walsh")},
    ),
    (
        "a place of a place",
        "Buyende",
        "Buyende is a town in the Eastern Region of Uganda.",
        {("Buyende", "TOWN_IN", "Eastern Region"), ("Eastern Region", "PART_OF", "Uganda")},
        {("Uganda", "PART_OF", "Eastern Region")},
    ),
    (
        "an untyped division of a place",
        "Ceelmakoile",
        "Ceelmakoile is a town in the central Hiran region of Somalia.",
        {("Hiran region", "PART_OF", "Somalia")},
        set(),
    ),
    (
        "a relational noun of a place is no part",
        None,
        "Paris is the capital of France.",
        {("Paris", "CAPITAL_OF", "France")},
        {("Paris", "PART_OF", "France")},
    ),
    (
        "a part stands for its whole",
        None,
        "Much of Britain was conquered by the Roman Empire from AD 43.",
        {("Britain", "CONQUERED_BY", "Roman Empire")},
        {("Roman Empire", "CONQUERED_BY", "Britain")},
    ),
    (
        "coordinated prepositional phrases",
        "Hogeschool",
        "Hogeschool is used in Belgium and in the Netherlands.",
        {("Hogeschool", "USED_IN", "Belgium"), ("Hogeschool", "USED_IN", "Netherlands")},
        set(),
    ),
    (
        "a quoted title the parse leaves hanging",
        "It'll Be Me",
        '"It\'ll Be Me" is a song written by Jack Clement, first released in April 1957 by Jerry Lee Lewis.',
        {("It'll Be Me", "WRITTEN_BY", "Jack Clement"), ("It'll Be Me", "RELEASED_BY", "Jerry Lee Lewis")},
        set(),
    ),
    (
        "a place and the region it lies in after a comma",
        "Mount Sulivan",
        "Mount Sulivan is a mountain on West Falkland, Falkland Islands, not far from Lake Sulivan.",
        {("West Falkland", "LOCATED_IN", "Falkland Islands")},
        {("Falkland Islands", "LOCATED_IN", "West Falkland")},
    ),
    (
        "a title the recogniser reads as a date is still the subject",
        "Salt March",
        "The Salt March was an act of civil disobedience in India initiated by Mohandas Karamchand Gandhi.",
        {("Salt March", "INITIATED_BY", "Mohandas Karamchand Gandhi")},
        set(),
    ),
    (
        "copula with a relational noun",
        None,
        "Nashville is the capital of Tennessee.",
        {("Nashville", "CAPITAL_OF", "Tennessee")},
        {("Tennessee", "CAPITAL_OF", "Nashville")},
    ),
    (
        "copula with an adjective",
        None,
        "Lake Geneva is adjacent to Lausanne.",
        {("Lake Geneva", "ADJACENT_TO", "Lausanne")},
        set(),
    ),
    (
        "relative clause, subject",
        None,
        "Publix was founded by George Jenkins, who also founded Jenkins Group.",
        {("Publix", "FOUNDED_BY", "George Jenkins"), ("George Jenkins", "FOUNDED", "Jenkins Group")},
        set(),
    ),
    (
        "relative clause, object",
        "Hello Love (song)",
        "Hello Love is a song which Hank Snow recorded.",
        {("Hank Snow", "RECORDED", "Hello Love")},
        {("Hello Love", "RECORDED", "Hank Snow")},
    ),
    (
        "reduced relative clause",
        None,
        "Aschenbrödel is a ballet written by Johann Strauss II.",
        {("Aschenbrödel", "WRITTEN_BY", "Johann Strauss II")},
        {("Johann Strauss II", "WRITTEN_BY", "Aschenbrödel")},
    ),
    (
        "coordinated subjects",
        None,
        "Larry Page and Sergey Brin founded Google.",
        {("Larry Page", "FOUNDED", "Google"), ("Sergey Brin", "FOUNDED", "Google")},
        set(),
    ),
    (
        "coordinated objects",
        None,
        "The Danube flows through Austria and Hungary.",
        {("Danube", "FLOWS_THROUGH", "Austria"), ("Danube", "FLOWS_THROUGH", "Hungary")},
        set(),
    ),
    (
        "coordinated verbs share the subject",
        None,
        "Hank Snow was born in Brooklyn and died in Madison.",
        {("Hank Snow", "BORN_IN", "Brooklyn"), ("Hank Snow", "DIED_IN", "Madison")},
        set(),
    ),
    (
        "coordinated verbs share the agent",
        "Your Love Is a Song",
        '"Your Love Is a Song" was written and recorded by Switchfoot.',
        {("Your Love Is a Song", "WRITTEN_BY", "Switchfoot"), ("Your Love Is a Song", "RECORDED_BY", "Switchfoot")},
        set(),
    ),
    (
        "possessive with apposition",
        None,
        "Canada's capital, Ottawa, lies on the Ottawa River.",
        {("Canada", "HAS_CAPITAL", "Ottawa"), ("Ottawa", "LIES_ON", "Ottawa River")},
        {("Ottawa", "CAPITAL", "Canada")},
    ),
    (
        "role with a possessor",
        None,
        "Hassan Gouled Aptidon served as Djibouti's first president.",
        {("Hassan Gouled Aptidon", "PRESIDENT_OF", "Djibouti")},
        set(),
    ),
    (
        "lifespan in brackets",
        None,
        "Scott Young (April 14, 1918 – June 12, 2005) was a Canadian journalist.",
        {("Scott Young", "BORN_ON", "April 14, 1918"), ("Scott Young", "DIED_ON", "June 12, 2005")},
        set(),
    ),
    (
        "birth in brackets, the day read apart and the place mislabelled",
        "Jean-Luc Vandenbroucke",
        "Jean-Luc Vandenbroucke (born 31 May 1955 in Mouscron) is a Belgian former road bicycle racer.",
        {
            ("Jean-Luc Vandenbroucke", "BORN_ON", "31 May 1955"),
            ("Jean-Luc Vandenbroucke", "BORN_IN", "Mouscron"),
        },
        {("Jean-Luc Vandenbroucke", "BORN", "31")},
    ),
    (
        "born on and in",
        None,
        "Marie Curie was born on 7 November 1867 in Warsaw.",
        {("Marie Curie", "BORN_ON", "7 November 1867"), ("Marie Curie", "BORN_IN", "Warsaw")},
        set(),
    ),
    (
        "pronoun refers back",
        None,
        "Hank Snow moved to Nashville. He recorded for RCA Victor.",
        {("Hank Snow", "MOVED_TO", "Nashville"), ("Hank Snow", "RECORDED_FOR", "RCA Victor")},
        set(),
    ),
    (
        "description of the topic",
        "Hello Love (song)",
        "Hello Love is a 1974 single by Hank Snow. The single reached the charts in Canada.",
        {("Hello Love", "SINGLE_BY", "Hank Snow")},
        set(),
    ),
    (
        "participle clause",
        None,
        "Founded in 1930 by George Jenkins, Publix is a supermarket chain.",
        {("Publix", "FOUNDED_BY", "George Jenkins"), ("Publix", "FOUNDED_IN", "1930")},
        set(),
    ),
    (
        "inverted passive",
        None,
        "Located in Paris is the Louvre Museum.",
        {("Louvre Museum", "LOCATED_IN", "Paris")},
        {("Paris", "LOCATED_IN", "Louvre Museum")},
    ),
    (
        "list after a colon",
        None,
        "The Beatles had four members: John Lennon, Paul McCartney, George Harrison and Ringo Starr.",
        {("Beatles", "HAD_MEMBERS", m) for m in ("John Lennon", "Paul McCartney", "George Harrison", "Ringo Starr")},
        set(),
    ),
    (
        "town and state",
        None,
        "Hank Snow was born in Nashville, Tennessee.",
        {("Hank Snow", "BORN_IN", "Nashville"), ("Nashville", "LOCATED_IN", "Tennessee")},
        {("Tennessee", "LOCATED_IN", "Nashville")},
    ),
    (
        "negation kept",
        None,
        "Iowa did not join the Confederacy.",
        {("Iowa", "NOT_JOIN", "Confederacy")},
        {("Iowa", "JOIN", "Confederacy")},
    ),
    (
        "also known as",
        None,
        "Publix Super Markets, commonly known as Publix, is a supermarket chain.",
        {("Publix Super Markets", "KNOWN_AS", "Publix")},
        set(),
    ),
    (
        "quantity as a value",
        None,
        "Kansas is divided into 4 congressional districts.",
        {("Kansas", "DIVIDED_INTO", "4 congressional districts")},
        set(),
    ),
    (
        "a nickname in quotes is part of a person's name, and the topic's pronoun is that person",
        "Lil Hardin Armstrong",
        'Lillian "Lil" Hardin Armstrong (née Hardin; February 3, 1898 – August 27, 1971) was a jazz pianist. '
        "She was the second wife of Louis Armstrong.",
        {
            ("Lil Hardin Armstrong", "WIFE_OF", "Louis Armstrong"),
            ("Lil Hardin Armstrong", "BORN_ON", "February 3, 1898"),
        },
        set(),
    ),
    (
        "a full name with a nickname is the topic it holds",
        "Edvard Johanson",
        'Karl "Edvard" Johanson (1882 – 1964) was a Swedish painter. He was born in Stockholm.',
        {("Edvard Johanson", "BORN_IN", "Stockholm")},
        {('Karl "Edvard" Johanson', "BORN_IN", "Stockholm")},
    ),
    (
        "a nickname's quote marks are no part of the name",
        None,
        'Karl "Edvard" Johanson (1882 – 1964) was a Swedish painter. He was born in Stockholm.',
        {("Karl Edvard Johanson", "BORN_IN", "Stockholm")},
        set(),
    ),
    (
        "a kind noun right before names stands for them",
        None,
        "Scott Alexander Young was a Canadian journalist, sportswriter, novelist and the father of musicians Neil "
        "Young and Astrid Young.",
        {("Scott Alexander Young", "FATHER_OF", "Neil Young"), ("Scott Alexander Young", "FATHER_OF", "Astrid Young")},
        set(),
    ),
    (
        "a recognised name cut at its 'of' is one name",
        None,
        "The National Physical Laboratory of India, situated in New Delhi, is the standards laboratory of India.",
        {("National Physical Laboratory of India", "LOCATED_IN", "New Delhi")},
        {("National Physical Laboratory of", "LOCATED_IN", "New Delhi")},
    ),
    (
        "a place modifying the kind says where the thing is from",
        None,
        "Fist Power is a 2000 Hong Kong action film directed by Aman Chang.",
        {("Fist Power", "FILM_FROM", "Hong Kong"), ("Fist Power", "DIRECTED_BY", "Aman Chang")},
        {("Hong Kong", "FILM_FROM", "Fist Power")},
    ),
    (
        "'is in' places: located there, every place of the list",
        None,
        "The Statue of Liberty National Monument is in both the states of New York and New Jersey.",
        {
            ("Statue of Liberty National Monument", "LOCATED_IN", "New York"),
            ("Statue of Liberty National Monument", "LOCATED_IN", "New Jersey"),
        },
        set(),
    ),
    (
        "a named thing 'in' a place is located there",
        None,
        "The Consulate General of the United States in Frankfurt represents the interests of the government.",
        {("Consulate General of the United States", "LOCATED_IN", "Frankfurt")},
        {("Frankfurt", "LOCATED_IN", "Consulate General of the United States")},
    ),
    (
        "a person 'in' a place is not located there",
        None,
        "He met John Smith in Paris.",
        set(),
        {("John Smith", "LOCATED_IN", "Paris")},
    ),
    (
        "a capitalised role of something is a role, not a name",
        None,
        "Albert was King of Sweden from 1364 to 1389.",
        {("Albert", "KING_OF", "Sweden"), ("Albert", "KING_FROM", "1364 to 1389")},
        {("Albert", "RELATED", "1364")},
    ),
    (
        "an age is no predicate: its phrase is the verb's",
        "Amalie Schoppe",
        "Amalie Schoppe was a writer. She moved to the United States of America with her son, where she died aged 66 "
        "in Schenectady, New York.",
        {("Amalie Schoppe", "DIED_IN", "Schenectady")},
        set(),
    ),
    (
        "a kind noun right before a name stands for it, not for what the clause describes",
        None,
        "John Doe is the son of the country singer Sammi Smith.",
        {("John Doe", "SON_OF", "Sammi Smith")},
        set(),
    ),
    (
        "a role with its holder's name in apposition stands for the person",
        None,
        "Ingrid Solberg reports to the Chief Technology Officer, Kwame Mensah.",
        {("Ingrid Solberg", "REPORTS_TO", "Kwame Mensah")},
        {("Ingrid Solberg", "REPORTS_TO", "Chief Technology Officer")},
    ),
    (
        "a description names the topic by its noun before a version or code",
        "Data Retention Policy v3",
        "# Data Retention Policy v3\n\nThe policy is owned by Amara Okoye.",
        {("Data Retention Policy v3", "OWNED_BY", "Amara Okoye")},
        set(),
    ),
    (
        "a larger place in apposition to a place is no holder of a role",
        None,
        "Peter Fliesteden was born in Bergheim, Rhein-Erft-Kreis.",
        {("Peter Fliesteden", "BORN_IN", "Bergheim")},
        set(),
    ),
    (
        "what follows 'died' in a birth bracket is the death",
        None,
        "Hyman Samuels (born March 12, 1909, St Louis, Missouri, died October 8, 1973, Los Angeles, California) was "
        "a manufacturer.",
        {("Hyman Samuels", "BORN_ON", "March 12, 1909"), ("Hyman Samuels", "DIED_ON", "October 8, 1973")},
        {("Hyman Samuels", "BORN_ON", "October 8, 1973"), ("Hyman Samuels", "BORN_IN", "Los Angeles")},
    ),
    (
        "one of a kind: the thing is of that kind",
        None,
        "The Arrondissement of Mouscron is one of the seven administrative arrondissements in the Province of Hainaut.",
        {("Arrondissement of Mouscron", "ARRONDISSEMENT_IN", "Province of Hainaut")},
        set(),
    ),
    (
        "a name that starts a clause after a noun is no apposition",
        None,
        "Mary married the man John hated.",
        set(),
        {("Mary", "MARRIED", "John")},
    ),
    (
        "an object's 'in' phrase is not where it is located",
        None,
        "The Company competes with Samsung in Korea.",
        set(),
        {("Samsung", "LOCATED_IN", "Korea")},
    ),
    (
        "'was active in' a place is no location",
        None,
        "Tom Smith was active in Paris.",
        set(),
        {("Tom Smith", "LOCATED_IN", "Paris")},
    ),
    (
        "a name inside a kind is no role",
        None,
        "Jon Snow is a Game of Thrones character.",
        set(),
        {("Jon Snow", "GAME_OF", "Thrones character")},
    ),
    (
        "an age in a main clause",
        None,
        "Jane Doe died aged 66 in Schenectady, New York.",
        {("Jane Doe", "DIED_IN", "Schenectady")},
        set(),
    ),
    (
        "'d.' that the recogniser takes into the date",
        None,
        "Tom Smith (born 1909, Boston; d. 1973, Paris) was a painter.",
        {("Tom Smith", "DIED_ON", "1973"), ("Tom Smith", "DIED_IN", "Paris"), ("Tom Smith", "BORN_ON", "1909")},
        {("Tom Smith", "BORN_ON", "d. 1973")},
    ),
    (
        "a capitalised phrase after 'an' is a kind: its clause describes the subject",
        "Alexander and the Terrible, Horrible, No Good, Very Bad Day",
        "Alexander and the Terrible, Horrible, No Good, Very Bad Day, published in 1972, is an ALA Notable "
        "Children's Book written by Judith Viorst and illustrated by Ray Cruz.",
        {
            ("Alexander and the Terrible, Horrible, No Good, Very Bad Day", "WRITTEN_BY", "Judith Viorst"),
            ("Alexander and the Terrible, Horrible, No Good, Very Bad Day", "ILLUSTRATED_BY", "Ray Cruz"),
        },
        {("Book", "WRITTEN_BY", "Judith Viorst")},
    ),
    (
        "a role 'as' names is held by the object",
        None,
        "On 10 September 2012, parliament elected Hassan Sheikh Mohamud as the new President of Somalia.",
        {("Hassan Sheikh Mohamud", "PRESIDENT_OF", "Somalia")},
        {("Somalia", "PRESIDENT_OF", "Hassan Sheikh Mohamud")},
    ),
    (
        "a role 'as' names is the subject's after a verb that puts no object in a role",
        None,
        "Obama visited Israel as President of the United States in 2013.",
        {("Obama", "PRESIDENT_OF", "United States")},
        {("Israel", "PRESIDENT_OF", "United States")},
    ),
    (
        "the successor holds the role, not the one succeeded",
        None,
        "Charles succeeded Elizabeth II as King of the United Kingdom.",
        {("Charles", "KING_OF", "United Kingdom")},
        {("Elizabeth II", "KING_OF", "United Kingdom")},
    ),
    (
        "an object that is no entity holds the role: nobody named does",
        None,
        "Obama appointed his friend as ambassador of the United States to Japan.",
        set(),
        {("Obama", "AMBASSADOR_OF", "United States")},
    ),
    (
        "no role: a result, an epithet, a part an actor plays",
        None,
        "Nixon resigned as a result of Watergate. George Washington is known as the father of the United States. "
        "Tom Hanks starred as the captain of the Maersk Alabama.",
        set(),
        {
            ("Nixon", "RESULT_OF", "Watergate"),
            ("George Washington", "FATHER_OF", "United States"),
            ("Tom Hanks", "CAPTAIN_OF", "Maersk Alabama"),
        },
    ),
    (
        "a name after 'a' that is no copula's complement stays a name",
        None,
        "John Smith flew a Boeing 747 to London.",
        {("John Smith", "FLEW", "Boeing 747")},
        set(),
    ),
    (
        "an object complement with 'of' is a role the subject holds",
        None,
        "Peter Appleyard was made an Officer of the Order of Canada in 1992.",
        {("Peter Appleyard", "OFFICER_OF", "Order of Canada")},
        {("Peter Appleyard", "MADE_OF", "Order of Canada")},
    ),
    (
        "attribute of the topic",
        "Tennessee",
        "Tennessee is a state in the United States. The capital is Nashville.",
        {("Tennessee", "STATE_IN", "United States"), ("Tennessee", "HAS_CAPITAL", "Nashville")},
        set(),
    ),
    (
        "second verb the tagger reads as a plural noun",
        None,
        "Tomás Herrera leads the Payments Platform team and reports to Ingrid Solberg.",
        {("Tomás Herrera", "MANAGES", "Payments Platform team"), ("Tomás Herrera", "REPORTS_TO", "Ingrid Solberg")},
        {("Ingrid Solberg", "REPORTS_TO", "Tomás Herrera")},
    ),
    (
        "second verb read as a plural noun, its preposition hung on the first verb",
        None,
        "Maria Lopez oversees sales and reports to David Chen.",
        {("Maria Lopez", "REPORTS_TO", "David Chen")},
        {("Maria Lopez", "OVERSEES_SALES_TO", "David Chen")},
    ),
    (
        "second verb read as a plural noun, an adverb before its hung preposition",
        None,
        "Jane Doe heads the Legal department and reports directly to the CEO, Mark Ellis.",
        {("Jane Doe", "REPORTS_TO", "Mark Ellis")},
        {("Jane Doe", "HEADS_DEPARTMENT_TO", "Mark Ellis")},
    ),
    (
        "a plural object with the first verb's preposition stays a noun",
        None,
        "Acme Corp sells laptops and tablets to Walmart.",
        set(),
        {("Acme Corp", "TABLETS_TO", "Walmart")},
    ),
    (
        "a relative clause after a City, Region pair that places a thing is the thing's",
        None,
        "Slipknot signed with Roadrunner Records, a label based in Des Moines, Iowa, which was founded by Cees "
        "Wessels.",
        {("Roadrunner Records", "LOCATED_IN", "Des Moines"), ("Roadrunner Records", "FOUNDED_BY", "Cees Wessels")},
        {("Des Moines", "FOUNDED_BY", "Cees Wessels")},
    ),
    (
        "a relative clause after a verb's City, Region pair is the city's",
        None,
        "He was born in Portland, Oregon, which was founded by Asa Lovejoy.",
        {("Portland", "FOUNDED_BY", "Asa Lovejoy")},
        set(),
    ),
    (
        "a participle that describes a work is the work's, not its maker's",
        None,
        "Christopher Nolan directed Oppenheimer, starring Cillian Murphy.",
        {("Christopher Nolan", "DIRECTED", "Oppenheimer"), ("Oppenheimer", "STARRING", "Cillian Murphy")},
        {("Christopher Nolan", "STARRING", "Cillian Murphy")},
    ),
    (
        "an infinitive of purpose after an object is the subject's",
        None,
        "Lewis Hamilton left Mercedes to join Ferrari in 2025.",
        {("Lewis Hamilton", "LEFT", "Mercedes"), ("Lewis Hamilton", "MEMBER_OF", "Ferrari")},
        {("Mercedes", "MEMBER_OF", "Ferrari")},
    ),
    (
        "an object-control verb's object does what its infinitive says",
        None,
        "Microsoft hired Satya Nadella to lead Azure.",
        {("Microsoft", "HIRED", "Satya Nadella"), ("Satya Nadella", "MANAGES", "Azure")},
        {("Microsoft", "MANAGES", "Azure")},
    ),
    (
        "an 'as' role after a verb that places its object is the object's",
        None,
        "Microsoft appointed Satya Nadella as CEO in 2014.",
        {("Microsoft", "APPOINTED", "Satya Nadella"), ("Satya Nadella", "APPOINTED_AS", "CEO")},
        {("Microsoft", "APPOINTED_AS", "CEO")},
    ),
    (
        "an adverb that makes a phrasal verb stays in its type",
        None,
        "Alice Wong rolled back change CHG-77.",
        {("Alice Wong", "ROLLED_BACK", "CHG-77")},
        {("Alice Wong", "ROLLED", "CHG-77")},
    ),
    (
        "a noun inside the verb's own preposition keeps its words in the type",
        None,
        "The International Court of Justice ruled in favour of Nicaragua against the United States.",
        {("International Court of Justice", "RULED_IN_FAVOUR_OF", "Nicaragua")},
        {("International Court of Justice", "RULED", "Nicaragua")},
    ),
    (
        "a regnal numeral I is no pronoun",
        None,
        "Elizabeth I was the daughter of Henry VIII. The Earl of Essex was executed by Elizabeth I.",
        {("Elizabeth I", "DAUGHTER_OF", "Henry VIII"), ("Earl of Essex", "EXECUTED_BY", "Elizabeth I")},
        {("Earl", "EXECUTED_BY", "Elizabeth I")},
    ),
    (
        "a peer is named by the place of the title",
        None,
        "Napoleon was defeated by the Duke of Wellington at the Battle of Waterloo.",
        {("Napoleon", "DEFEATED_BY", "Duke of Wellington")},
        {("Napoleon", "DEFEATED_BY", "Duke")},
    ),
    (
        "a court case's name holds both parties",
        None,
        "Plessy v. Ferguson was overruled by Brown v. Board of Education in 1954. Judge Yvonne Gonzalez Rogers "
        "presided over Epic Games v. Apple.",
        {
            ("Plessy v. Ferguson", "OVERRULED_BY", "Brown v. Board of Education"),
            ("Yvonne Gonzalez Rogers", "PRESIDED_OVER", "Epic Games v. Apple"),
        },
        {("Plessy", "OVERRULED_BY", "Brown v. Board of Education")},
    ),
    (
        "a capitalised adjective before a misread person is part of the name",
        None,
        "The Large Hadron Collider is operated by CERN.",
        {("Large Hadron Collider", "OPERATED_BY", "CERN")},
        {("Hadron Collider", "OPERATED_BY", "CERN")},
    ),
    (
        "a noun joining two parties by 'between'",
        None,
        "The agreement between Acme Corp and Globex Ltd is governed by English law. The distance between London "
        "and Paris is 344 km.",
        {("Acme Corp", "AGREEMENT_WITH", "Globex Ltd")},
        {("London", "DISTANCE_WITH", "Paris")},
    ),
    (
        "a passive's agent who works at a body credits the body",
        None,
        "The SQuAD dataset was created by researchers at Stanford University.",
        {("SQuAD dataset", "CREATED_BY", "Stanford University")},
        {("SQuAD dataset", "RELATED", "Stanford University")},
    ),
    (
        "a succession's role is held by both, and an 'as' on the object is the verb's",
        None,
        "Steve Ballmer was succeeded by Satya Nadella as CEO of Microsoft. Mandela succeeded F. W. de Klerk as "
        "President of South Africa.",
        {
            ("Steve Ballmer", "SUPERSEDED_BY", "Satya Nadella"),
            ("Satya Nadella", "CEO_OF", "Microsoft"),
            ("Mandela", "PRESIDENT_OF", "South Africa"),
        },
        set(),
    ),
    (
        "a lower-case system name is a name",
        None,
        "checkout-service depends on payments-api. The payments-api depends on PostgreSQL.",
        {("checkout-service", "DEPENDS_ON", "payments-api"), ("payments-api", "DEPENDS_ON", "PostgreSQL")},
        set(),
    ),
    (
        "a capitalised number word is a name's designator, and a last letter's stop ends the sentence",
        None,
        "Policy Two supersedes Policy One.\nPolicy B supersedes Policy A.",
        {("Policy Two", "SUPERSEDES", "Policy One"), ("Policy B", "SUPERSEDES", "Policy A")},
        {("Policy B", "SUPERSEDES", "Policy A.")},
    ),
    (
        "the sentence's verb inside a recognised name splits it",
        None,
        "Oracle sued Rimini Street for copyright infringement.",
        {("Oracle", "SUED", "Rimini Street")},
        set(),
    ),
    (
        "review guards: what rules 27's first versions misread",
        None,
        "Apple paid Foxconn to build the iPhone. Martin Scorsese joined Netflix in 2019, starring in The Irishman. "
        "James I succeeded Elizabeth I as King of England.",
        {
            ("Foxconn", "BUILD", "iPhone"),  # the object does it after any verb but one of leaving or buying
            ("Martin Scorsese", "STARRING_IN", "The Irishman"),  # "starring in" with no object is the subject's
            ("James I", "SUPERSEDES", "Elizabeth I"),  # a recognised person's name holds no "as"
        },
        {("Apple", "BUILD", "iPhone"), ("Netflix", "STARRING_IN", "The Irishman")},
    ),
    (
        "review guards: a body's people only 'at' it, 'back' after a verb of motion, a compound with 'worker'",
        None,
        "Linux was developed by a student from the University of Helsinki. Ian Rush came back to Liverpool after a "
        "year at Juventus. Jane Doe is a social-worker for the City of Boston.",
        {("Jane Doe", "WORKER_FOR", "City of Boston")},
        {("Linux", "DEVELOPED_BY", "University of Helsinki"), ("Ian Rush", "CAME_BACK_AT", "Juventus")},
    ),
    (
        "gerund after a preposition has the clause's subject",
        None,
        "Kwame Mensah joined Northwind Holdings in 2019 after leaving Contoso.",
        {("Kwame Mensah", "LEAVING", "Contoso"), ("Kwame Mensah", "MEMBER_OF", "Northwind Holdings")},
        {("Northwind Holdings", "LEAVING", "Contoso")},
    ),
    (
        "definite description of a name written before a code",
        None,
        "Change Advisory Board decision CAB-2023-31 was issued in March. The decision was implemented by the Site "
        "Reliability team.",
        {("CAB-2023-31", "IMPLEMENTED_BY", "Site Reliability team")},
        {("Change Advisory Board decision", "IMPLEMENTED_BY", "Site Reliability team")},
    ),
    (
        "definite description of a name's head and of an apposition",
        None,
        "The Governance Board met in Oslo. The board was chaired by Maria Chen. Acme Corp, a software company, "
        "hired Maria Chen. The company was acquired by Globex.",
        {("Governance Board", "CHAIRED_BY", "Maria Chen"), ("Acme Corp", "ACQUIRED_BY", "Globex")},
        set(),
    ),
    (
        "a description of a name is no attribute of the topic",
        "David Scofield",
        "David Scofield fought at the Battle of Cedar Creek. The battle was the decisive engagement of the Valley "
        "Campaigns.",
        {("Battle of Cedar Creek", "ENGAGEMENT_OF", "Valley Campaigns")},
        {("David Scofield", "HAS_BATTLE", "Battle of Cedar Creek")},
    ),
    (
        "an adjective after its noun with a preposition",
        "Gila monster",
        "The Gila monster is a species of venomous lizard native to the Mexican state of Sonora. It is found in "
        "The Life Aquatic with Steve Zissou, a film released in 2004.",
        {("Gila monster", "NATIVE_TO", "Sonora")},
        {("The Life Aquatic", "AQUATIC_WITH", "Steve Zissou"), ("Sonora", "NATIVE_TO", "Gila monster")},
    ),
    (
        "a generic noun a participle names",
        None,
        "Settlement followed a visionary plan known as the Grand Model prepared by John Locke. A boy named John Smith "
        "was raised by Mary Jones. The street was named after George Washington by Tom Hanks.",
        {("Grand Model", "PREPARED_BY", "John Locke"), ("John Smith", "RAISED_BY", "Mary Jones")},
        {("George Washington", "NAMED_BY", "Tom Hanks")},
    ),
    (
        "an attribute noun with its owner after 'of'",
        None,
        "The capital of France is Paris. The population of Kansas was 2,913,123 in 2010. Much of Britain is Wales.",
        {("France", "HAS_CAPITAL", "Paris"), ("Kansas", "HAS_POPULATION", "2,913,123")},
        {("Paris", "HAS_CAPITAL", "France"), ("Britain", "HAS_MUCH", "Wales")},
    ),
    (
        "a bare passive with a role keeps its be",
        None,
        "Ellinah Wamukoya was elected Anglican Bishop of Swaziland. Amara Okoye elected Jane Smith.",
        {("Ellinah Wamukoya", "WAS_ELECTED", "Anglican Bishop"), ("Amara Okoye", "ELECTED", "Jane Smith")},
        {("Ellinah Wamukoya", "ELECTED", "Anglican Bishop")},
    ),
    (
        "a gerund about the object or about nothing that happened",
        None,
        "Jane Smith stopped Bob Jones from joining Globex. Ingrid Solberg thanked Kwame Mensah for helping Contoso.",
        {("Jane Smith", "STOPPED", "Bob Jones")},
        {("Jane Smith", "MEMBER_OF", "Globex"), ("Ingrid Solberg", "HELPING", "Contoso")},
    ),
    (
        "a description refers to its nearest occurrence only",
        None,
        "Company founder Jane Smith left Globex. The company was acquired by Initech. Acme Corp, a software "
        "company, hired Maria Chen. Globex bought a small company in Ohio. The company was renamed by Tom Hanks. "
        "The Brennan Courthouse is a historic building. The building was reopened by Tom Hanks.",
        {("Brennan Courthouse", "REOPENED_BY", "Tom Hanks")},
        {("Jane Smith", "ACQUIRED_BY", "Initech"), ("Acme Corp", "RENAMED_BY", "Tom Hanks")},
    ),
    (
        "a place or a part after 'of' owns nothing",
        None,
        "The city of Oslo is Christiania. The rest of Europe is Schengen.",
        set(),
        {("Oslo", "HAS_CITY", "Christiania"), ("Europe", "HAS_REST", "Schengen")},
    ),
    (
        "a noun inside a longer name describes nothing",
        None,
        "World War II ended in 1945. The world was then divided by the Iron Curtain.",
        set(),
        {("World War II", "DIVIDED_BY", "Iron Curtain")},
    ),
    (
        "short form of a coded name",
        "Data Retention Policy v3",
        "Data Retention Policy v3 supersedes Data Retention Policy v2. Policy v3 was drafted by the Legal "
        "Operations team.",
        {
            ("Data Retention Policy v3", "SUPERSEDES", "Data Retention Policy v2"),
            ("Data Retention Policy v3", "DRAFTED_BY", "Legal Operations team"),
        },
        {("Policy v3", "DRAFTED_BY", "Legal Operations team")},
    ),
    (
        "sentence after a heading",  # the tagger read "Veltrix" as the object of "In" across the blank line
        None,
        "## Ownership\n\nIn 2016 Veltrix was acquired by Meridian Holdings, a Dutch investment group.",
        {("Veltrix", "ACQUIRED_BY", "Meridian Holdings")},
        set(),
    ),
    (
        "a paragraph after a paragraph",  # the blank line's whitespace token misled the tagger: nothing was read
        None,
        "Veltrix makes sensors.\n\n\nIn 2016 Veltrix was acquired by Orbis Partners.",
        {("Veltrix", "ACQUIRED_BY", "Orbis Partners")},
        set(),
    ),
    (
        "a list whose items are no names",
        None,
        "Halden Group follows these rules:\n- Oslo staff report to Ana Ruiz\n- Bergen staff report to Tomas Lind",
        set(),
        {("Halden Group", "FOLLOWS", "Oslo"), ("Halden Group", "FOLLOWS", "Bergen")},
    ),
    (
        "an agent after a relative 'by which'",
        None,
        "Orbis Partners, by which Veltrix was acquired, is based in Oslo.",
        {("Veltrix", "ACQUIRED_BY", "Orbis Partners")},
        set(),
    ),
    (
        "'by' after an active verb's object names the object's maker",
        None,
        "Penguin Books published a novel by Tomas Lind. Ana Ruiz recorded a song by Tomas Lind.",
        {("Penguin Books", "PUBLISHED_NOVEL_BY", "Tomas Lind"), ("Ana Ruiz", "RECORDED_SONG_BY", "Tomas Lind")},
        {("Penguin Books", "PUBLISHED_BY", "Tomas Lind"), ("Ana Ruiz", "RECORDED_BY", "Tomas Lind")},
    ),
    (
        "a passive's agent is no pronoun's antecedent beside another person",
        None,
        "Ana Ruiz drafted the Travel Policy. The Travel Policy was approved by Tomas Lind. She moved to Oslo.",
        {("Travel Policy", "APPROVED_BY", "Tomas Lind")},
        {("Tomas Lind", "MOVED_TO", "Oslo")},
    ),
    (
        "a title before a surname is no given name",
        None,
        "Chairman Mao met Tomasz Nowak.",
        {("Mao", "MET", "Tomasz Nowak")},
        {("Chairman Mao", "MET", "Tomasz Nowak")},
    ),
    (
        "a legal form after a comma or an ampersand's Co. is part of the company's name",
        None,
        "Goldman Sachs & Co. LLC advised Quillon Software, Inc. on the sale.",
        {("Goldman Sachs & Co. LLC", "ADVISED", "Quillon Software, Inc.")},
        {("LLC", "ADVISED", "Quillon Software, Inc."), ("Goldman Sachs & Co. LLC", "ADVISED", "Inc.")},
    ),
    (
        "a role of an owner in apposition, with or without 'the'",
        None,
        "Jacob Zuma, the President of South Africa, visited Oslo. Tomasz Nowak, CEO of Veltrix, signed the report.",
        {("Jacob Zuma", "PRESIDENT_OF", "South Africa"), ("Tomasz Nowak", "CEO_OF", "Veltrix")},
        set(),
    ),
    (
        "a passive's role complement is held of its owner",
        None,
        "Claudia Sheinbaum was elected President of Mexico in June 2024. Gustav was crowned King of Sweden.",
        {("Claudia Sheinbaum", "PRESIDENT_OF", "Mexico"), ("Gustav", "KING_OF", "Sweden")},
        {("Claudia Sheinbaum", "WAS_ELECTED", "President"), ("Gustav", "WAS_CROWNED", "King")},
    ),
    (
        "a successor after a placing verb is its object",
        None,
        "Emmanuel Macron appointed Gabriel Attal prime minister, replacing Élisabeth Borne. Acme hired Maria Chen in "
        "2020, replacing Tom Hale.",
        {("Gabriel Attal", "SUPERSEDES", "Élisabeth Borne"), ("Maria Chen", "SUPERSEDES", "Tom Hale")},
        {("Emmanuel Macron", "SUPERSEDES", "Élisabeth Borne"), ("Acme", "SUPERSEDES", "Tom Hale")},
    ),
    (
        "a passive's role complement that did not happen, or not yet, is held of nothing",
        None,
        "Anna Berg was not elected President of Mexico. Carl Holm may be elected Governor of Texas next year. Ines "
        "Moreau was named former CEO of Meridian. Lea Fox was elected President of Peru, not of Chile.",
        {("Lea Fox", "PRESIDENT_OF", "Peru")},
        {
            ("Anna Berg", "PRESIDENT_OF", "Mexico"),
            ("Carl Holm", "GOVERNOR_OF", "Texas"),
            ("Ines Moreau", "CEO_OF", "Meridian"),
            ("Lea Fox", "PRESIDENT_OF", "Chile"),
        },
    ),
    (
        "each role of a passive's coordinated complements",
        None,
        "Anna Berg was elected Mayor of Chicago and later Governor of Illinois.",
        {("Anna Berg", "MAYOR_OF", "Chicago"), ("Anna Berg", "GOVERNOR_OF", "Illinois")},
        set(),
    ),
    (
        "a role in apposition ruled out or ended is held of nothing",
        None,
        "Tomasz Nowak, not the CEO of Veltrix, signed the filing. Ines Moreau, CEO of Globex until 2019, left. Lea "
        "Fox, CEO of Initech from 2010 to 2019, spoke.",
        set(),
        {("Tomasz Nowak", "CEO_OF", "Veltrix"), ("Ines Moreau", "CEO_OF", "Globex"), ("Lea Fox", "CEO_OF", "Initech")},
    ),
    (
        "'instead of' and 'rather than' before a preposition or a list",
        None,
        "Veltrix was acquired by Meridian rather than by Harborline. The QA team reports to Meera Iyer instead of "
        "Paul Grant or Anna Berg. Meridian acquired Veltrix instead of Harborline.",
        {("Veltrix", "ACQUIRED_BY", "Meridian"), ("QA team", "REPORTS_TO", "Meera Iyer")},
        {
            ("Veltrix", "ACQUIRED_BY", "Harborline"),
            ("QA team", "REPORTS_TO", "Anna Berg"),
            ("Veltrix", "PART_OF", "Harborline"),
        },
    ),
    (
        "an office before 'and' is no part of a body's name; a legal form after a place-like name is a company's",
        None,
        "Internal Audit reports to the Controller and Finance Committee. Harborline, LLC is owned by Meridian. Pam "
        "Bondi, AG, announced the settlement with Veltrix.",
        {
            ("Internal Audit", "REPORTS_TO", "Finance Committee"),
            ("Harborline, LLC", "OWNED_BY", "Meridian"),
            ("Pam Bondi", "ANNOUNCED_SETTLEMENT_WITH", "Veltrix"),
        },
        {("Internal Audit", "REPORTS_TO", "Controller and Finance Committee"), ("LLC", "OWNED_BY", "Meridian")},
    ),
    (
        "what 'instead of' names is ruled out",
        None,
        "Following the reorganization, the QA team reports to Meera Iyer instead of Paul Grant.",
        {("QA team", "REPORTS_TO", "Meera Iyer")},
        {("QA team", "REPORTS_OF", "Paul Grant"), ("QA team", "REPORTS_TO", "Paul Grant")},
    ),
    (
        "one name of a document or body whose words 'and' joins before its head",
        None,
        "The Anti-Bribery Policy is supplemented by the Gifts and Hospitality Procedure. The Audit and Risk Committee "
        "approved the Remote Work Policy.",
        {
            ("Anti-Bribery Policy", "SUPPLEMENTED_BY", "Gifts and Hospitality Procedure"),
            ("Audit and Risk Committee", "APPROVED", "Remote Work Policy"),
        },
        {
            ("Anti-Bribery Policy", "SUPPLEMENTED_BY", "Hospitality Procedure"),
            ("Committee", "APPROVED", "Remote Work Policy"),
        },
    ),
    (
        "a given name that is a dictionary word is no title; an agent noun is",
        None,
        "Ana Souza founded Keel Labs. Sheriff Taylor arrested Otis Campbell.",
        {("Ana Souza", "FOUNDED", "Keel Labs"), ("Taylor", "ARRESTED", "Otis Campbell")},
        {("Souza", "FOUNDED", "Keel Labs"), ("Sheriff Taylor", "ARRESTED", "Otis Campbell")},
    ),
    (
        "bulleted list after a colon",
        None,
        "Veltrix Systems owns the following subsidiaries:\n\n- Nordlys Software\n- Calder Instruments\n"
        "- Pinecrest Analytics, a data firm\n\nThe board approved it.",
        {
            ("Veltrix Systems", "OWNS_SUBSIDIARIES", "Nordlys Software"),
            ("Veltrix Systems", "OWNS_SUBSIDIARIES", "Calder Instruments"),
            ("Veltrix Systems", "OWNS_SUBSIDIARIES", "Pinecrest Analytics"),
        },
        set(),
    ),
    (
        "numbered list after a counted noun",
        None,
        "The Audit Committee has three members:\n1. Jane Smith\n2. Bob Jones\n3. Ana Lima\nThe rest is history.",
        {("Audit Committee", "HAS_MEMBERS", "Jane Smith"), ("Audit Committee", "HAS_MEMBERS", "Ana Lima")},
        {("Audit Committee", "RELATED", "three members")},
    ),
    (
        "a name before a colon is the object, not the list",
        None,
        "Nordlys Software reports to Acme Corp:\n- Calder Instruments\n- Pinecrest Analytics",
        {("Nordlys Software", "REPORTS_TO", "Acme Corp")},
        {("Nordlys Software", "REPORTS_TO", "Calder Instruments")},
    ),
    (
        "a role written as a name, then its holder, as a subject",  # the recogniser typed Grace Obi an organisation
        None,
        "Harborline's Chief People Officer, Grace Obi, owns the Remote Work Policy.",
        {("Grace Obi", "OWNS", "Remote Work Policy")},
        {("Chief People Officer", "OWNS", "Remote Work Policy")},
    ),
    (
        "a role's holder after a comma alone, then a relative clause",
        None,
        "Tomasz Nowak leads the Contracts team. He reports to the General Counsel, Amara Eze, who reports to the "
        "Chief Executive Officer, Martin Hale.",
        {("Tomasz Nowak", "REPORTS_TO", "Amara Eze"), ("Amara Eze", "REPORTS_TO", "Martin Hale")},
        {("General Counsel", "REPORTS_TO", "Martin Hale"), ("Nowak", "REPORTS_TO", "Amara Eze")},
    ),
    (
        "a role with its own 'of', then its holder, in a coordinated object",
        None,
        "Elena Petrova informed the Customer Support team and the VP of Engineering, Sam Okoro.",
        {("Elena Petrova", "INFORMED", "Sam Okoro")},
        {("Elena Petrova", "INFORMED", "VP of Engineering")},
    ),
    (
        "a list of names is no role and its holder",
        None,
        "He played for the Rockets, Golden State Warriors, Washington Bullets and New Jersey Nets.",
        set(),
        {("Rockets", "PLAYED_FOR", "Washington Bullets")},
    ),
    (
        "a rank before a name is no given name",
        None,
        "Colonel Paul Tibbets flew the Enola Gay. Captain Smith commanded the Titanic.",
        {("Paul Tibbets", "FLEW", "Enola Gay"), ("Smith", "COMMANDED", "Titanic")},
        {("Captain Smith", "COMMANDED", "Titanic")},
    ),
    (
        "a second verb after the agent's apposition",
        None,
        "The Audit Committee is chaired by Helen Park, a non-executive director, and reports to the Board of "
        "Directors.",
        {("Audit Committee", "CHAIRED_BY", "Helen Park"), ("Audit Committee", "REPORTS_TO", "Board of Directors")},
        set(),
    ),
    (
        "a time after 'by' is a deadline, not an agent",
        None,
        "Urartu was established in 860 BC and by the 6th century BC it was replaced by the Satrapy of Armenia. "
        "By early 2011, Milenko Milosevic took charge of the team. By the Late Middle Ages, Great Britain was "
        "separated into two kingdoms. Hong Kong Island was ceded to the United Kingdom by the Qing dynasty.",
        {("Urartu", "ESTABLISHED_IN", "860 BC"), ("Hong Kong Island", "CEDED_BY", "Qing dynasty")},
        {
            ("Urartu", "SUPERSEDED_BY", "6th century"),
            ("Milenko Milosevic", "TOOK_CHARGE_BY", "early 2011"),
            ("Great Britain", "SEPARATED_BY", "Late Middle Ages"),
        },
    ),
    (
        "a pronoun for a passive's agent",  # the subject is an office; "He" is the person who leads it
        None,
        "The Compliance Office is led by Tomasz Nowak. He reports to the General Counsel, Amara Eze. It reports to "
        "the Audit Committee.",
        {
            ("Compliance Office", "MANAGED_BY", "Tomasz Nowak"),
            ("Tomasz Nowak", "REPORTS_TO", "Amara Eze"),
            ("Compliance Office", "REPORTS_TO", "Audit Committee"),
        },
        set(),
    ),
    (
        "a time zone after a clock time is no entity",
        None,
        "- 09:12 UTC: Release 7.3.0 of the payment-gateway was deployed by Kofi Mensah.",
        {("Release 7.3.0 of the payment-gateway", "DEPLOYED_BY", "Kofi Mensah")},  # one name, as "Rule 405 of
        # Regulation S-T": the system named is part of what the release is
        {("UTC", "DEPLOYED_BY", "Kofi Mensah")},
    ),
    (
        "the passive of a curated verb",
        None,
        "Olga Brandt was succeeded as CEO by Henrik Vos in 2009. The Travel Policy 2019 was replaced by the Global "
        "Travel Policy 2023.",
        {
            ("Olga Brandt", "SUPERSEDED_BY", "Henrik Vos"),
            ("Travel Policy 2019", "SUPERSEDED_BY", "Global Travel Policy 2023"),
        },
        {("Travel Policy 2019", "REPLACED_BY", "Global Travel Policy 2023")},
    ),
    (
        "descriptions a passage uses as names",
        None,
        "The checkout service depends on the payment-gateway service and on the inventory service. The payment-gateway "
        "service depends on the Orders Database. Kaspar Ilves maintains the sensor network. The sensor network was "
        "funded by the European Regional Development Fund. The checkout service and the inventory service are slow.",
        {
            ("checkout service", "DEPENDS_ON", "payment-gateway service"),
            ("checkout service", "DEPENDS_ON", "inventory service"),
            ("payment-gateway service", "DEPENDS_ON", "Orders Database"),
            ("Kaspar Ilves", "MAINTAINS", "sensor network"),
            ("sensor network", "FUNDED_BY", "European Regional Development Fund"),
        },
        {("payment-gateway service", "DEPENDS_ON", "checkout service")},
    ),
    (
        "a description said of a name is its kind, not a thing",
        None,
        "WXYZ is a radio station in Ohio. The radio station was founded by John Smith.",
        set(),
        {("radio station", "FOUNDED_BY", "John Smith")},
    ),
    (
        "another of a kind is no thing",
        None,
        "Another heavy snow event occurred in 1916. Another snow event occurred in 2008.",
        set(),
        {("snow event", "OCCURRED_IN", "1916"), ("snow event", "OCCURRED_IN", "2008")},
    ),
    (
        "a name behind a description's preposition says more than the description",
        None,
        "Vasco da Gama found the sea route to India. The sea route was long.",
        {("Vasco da Gama", "FOUND_SEA_ROUTE_TO", "India")},
        {("Vasco da Gama", "FOUND", "sea route")},
    ),
    (
        "a description's copula complement is the description, no attribute of the topic",
        "Gold Coast",
        "Gold Coast traded gold with Portugal. The slave trade grew. The slave trade was the principal exchange of "
        "the economy.",
        {("Gold Coast", "TRADED_GOLD_WITH", "Portugal")},
        {("Gold Coast", "HAS_TRADE", "slave trade")},
    ),
    (
        "a name the tagger read as a noun where a sentence opens",
        None,
        "In 2004 Veltrix acquired Nordlys Software. Veltrix became a wholly owned subsidiary of Meridian.",
        {("Veltrix", "ACQUIRED", "Nordlys Software"), ("Veltrix", "PART_OF", "Meridian")},
        {("Meridian", "PART_OF", "Veltrix")},
    ),
    (
        "a duration written in parts is one value",
        None,
        "On 12 February the checkout service returned errors for 2 hours and 14 minutes. The checkout service "
        "recovered.",
        {("checkout service", "RETURNED_ERRORS_FOR", "2 hours and 14 minutes")},
        {("checkout service", "RETURNED_ERRORS_FOR", "14 minutes")},
    ),
    (
        "values of one unit are two values",
        None,
        "Tesla delivered 5 tonnes and 3 tonnes to Berlin.",
        {("Tesla", "DELIVERED", "5 tonnes"), ("Tesla", "DELIVERED", "3 tonnes")},
        {("Tesla", "DELIVERED", "5 tonnes and 3 tonnes")},
    ),
    (
        "a capital letter alone is no name read again",
        "Saint Barthélemy",
        "Saint Barthélemy has a tropical climate. The average high and low temperatures in January are 28 °C and "
        "22 °C.",
        {("Saint Barthélemy", "HAS_TEMPERATURES", "28 °C")},
        set(),
    ),
    (
        "a pronoun refers to the topic, not to a description",
        "White Horse (song)",
        "White Horse is a song by Taylor Swift. The title track was written by Jane Smith. It was released in 1990. "
        "The title track charted.",
        {("White Horse", "RELEASED_IN", "1990")},
        {("title track", "RELEASED_IN", "1990")},
    ),
    (
        "a role written as a name, its owner and its holder",
        None,
        "Harborline's Chief People Officer, Grace Obi, owns the Remote Work Policy.",
        {("Harborline", "HAS_OFFICER", "Grace Obi"), ("Grace Obi", "OWNS", "Remote Work Policy")},
        {("Grace Obi", "HAS_OFFICER", "Harborline"), ("Chief People Officer", "OWNS", "Remote Work Policy")},
    ),
    (
        "a role written as a name after its holder, with its owner",
        None,
        "Policy v4 is owned by Rahul Desai, Harborline's Chief Information Security Officer.",
        {("Harborline", "HAS_OFFICER", "Rahul Desai"), ("Policy v4", "OWNED_BY", "Rahul Desai")},
        {("Rahul Desai", "HAS_OFFICER", "Harborline")},
    ),
    (
        "a role written as a name, with its holder and no owner",
        None,
        "He reports to the General Counsel, Amara Eze, who reports to the Chief Executive Officer, Martin Hale. "
        "Elena Petrova informed the Customer Support team and the VP of Engineering, Sam Okoro.",
        {
            ("Amara Eze", "SERVES_AS", "General Counsel"),
            ("Amara Eze", "REPORTS_TO", "Martin Hale"),
            ("Martin Hale", "SERVES_AS", "Chief Executive Officer"),
            ("Elena Petrova", "INFORMED", "Sam Okoro"),
            ("Sam Okoro", "SERVES_AS", "VP of Engineering"),
        },
        {("Elena Petrova", "INFORMED", "VP of Engineering"), ("General Counsel", "SERVES_AS", "Amara Eze")},
    ),
    (
        "a former role is held no more; an office is the role's head word",
        None,
        "Harborline's previous Chief People Officer, Mark Dunn, will retire. The former General Counsel, Amara Eze, "
        "testified. Acme's Executive Committee, Ann Lee, Bob Roe and Carl Fox, approved the plan.",
        set(),
        {
            ("Harborline", "HAS_OFFICER", "Mark Dunn"),
            ("Amara Eze", "SERVES_AS", "General Counsel"),
            ("Acme", "HAS_COMMITTEE", "Ann Lee"),
        },
    ),
    (
        "the person among names in a row after a role; a role under a possessive pronoun",
        None,
        "Acme's Director, Product Management, Lea Fox, presented. Our Chief Financial Officer, Mary Ortiz, resigned.",
        {("Acme", "HAS_DIRECTOR", "Lea Fox"), ("Mary Ortiz", "SERVES_AS", "Chief Financial Officer")},
        {("Acme", "HAS_DIRECTOR", "Product Management")},
    ),
    (
        "a role with a complement of its own, or no office, is no held role",
        None,
        "Jacob Zuma, the President of South Africa, attended the summit. Author: Noor Haddad, Site Reliability "
        "Engineering.",
        set(),
        {("Jacob Zuma", "SERVES_AS", "President"), ("Noor Haddad", "SERVES_AS", "Site Reliability Engineering")},
    ),
    (
        "a company's name without its legal form is the company",
        None,
        "In 2016 Veltrix was acquired by Meridian Holdings. Meridian's chairman, Willem de Jong, joined the board. "
        "Meridian sold Brightline in 2022.",
        {
            ("Veltrix", "ACQUIRED_BY", "Meridian Holdings"),
            ("Meridian Holdings", "HAS_CHAIRMAN", "Willem de Jong"),
            ("Meridian Holdings", "SOLD", "Brightline"),
        },
        {("Meridian", "HAS_CHAIRMAN", "Willem de Jong"), ("Meridian", "SOLD", "Brightline")},
    ),
    (
        "a defined term is what the text defines it as",
        None,
        "This report covers NVIDIA Corporation (the \u201cCompany\u201d). The Company acquired Mellanox in 2020.",
        {("NVIDIA Corporation", "ACQUIRED", "Mellanox")},
        {("Company", "ACQUIRED", "Mellanox")},
    ),
    (
        "the company is the passage's main subject when that is a company",
        None,
        "Acme Corp hired Bob Lee in 2001. Acme Corp moved to Oslo. The company acquired Zeta Systems in 2010.",
        {("Acme Corp", "ACQUIRED", "Zeta Systems")},
        set(),
    ),
    (
        "the company is no company named before another one",
        None,
        "Microsoft announced that it would acquire LinkedIn. Microsoft will pay $196 per share. LinkedIn chief "
        "executive Jeff Weiner will stay. The company was founded in 2002 by Reid Hoffman. Apple sued Samsung. Apple "
        "claimed that Samsung copied the iPhone. The companies signed an agreement with Qualcomm.",
        set(),
        {("Microsoft", "FOUNDED_BY", "Reid Hoffman"), ("Samsung", "SIGNED_AGREEMENT_WITH", "Qualcomm")},
    ),
    (
        "a company's short name is never a place's",
        None,
        "Boston Holdings Inc. is headquartered in Boston. The Cross-Bronx Expressway connects the George Washington "
        "Bridge with the Bronx River Parkway.",
        {
            ("Boston Holdings Inc.", "LOCATED_IN", "Boston"),
            ("Cross-Bronx Expressway", "CONNECTS", "George Washington Bridge"),
        },
        set(),
    ),
    (
        "a company named once is no main subject",
        None,
        "Ann Lee worked at Philips. She moved to Oslo. The company bought Calder Instruments.",
        set(),
        {("Philips", "BOUGHT", "Calder Instruments")},
    ),
    (
        "a verb with a hyphenated prefix is one word",
        None,
        "Lena Ortiz co-founded Acme with Tom Baker.",
        {("Lena Ortiz", "FOUNDED", "Acme"), ("Lena Ortiz", "CO_FOUNDED_WITH", "Tom Baker")},
        set(),
    ),
    (
        "two companies, one short name: neither",
        None,
        "Acme Holdings and Acme Ltd merged their units. Acme hired Ann Lee.",
        set(),
        {("Acme Holdings", "HIRED", "Ann Lee"), ("Acme Ltd", "HIRED", "Ann Lee")},
    ),
    (
        "a passive's agent before a participle the parse took for its noun",
        None,
        "Dead Ernest is a novel that was published in 1944 by Phoebe Atwood Taylor writing as Alice Tilton.",
        {("Dead Ernest", "PUBLISHED_BY", "Phoebe Atwood Taylor")},
        {("Dead Ernest", "RELATED", "Alice Tilton"), ("Dead Ernest", "PUBLISHED_BY", "Alice Tilton")},
    ),
    (
        "a noun in -ing with its article is a noun, not a participle",
        None,
        "Luís Galego achieved a top Elo rating of 2543.",
        {("Luís Galego", "ACHIEVED", "2543")},
        {("Luís Galego", "ACHIEVED", "Elo")},
    ),
    (
        "a locative participle after a comma places what the place holds",
        "Walden, Nova Scotia",
        "Walden is a community in the Canadian province of Nova Scotia, located in the Lunenburg Municipal District.",
        {("Walden", "COMMUNITY_IN", "Nova Scotia"), ("Walden", "LOCATED_IN", "Lunenburg Municipal District")},
        {("Nova Scotia", "LOCATED_IN", "Lunenburg Municipal District")},
    ),
    (
        "a locative participle after what a person is at or lives in places that",
        None,
        "Maria Lopez is a senior analyst at Morgan Stanley, headquartered in New York. Albert Einstein lived in"
        " Princeton, located in New Jersey.",
        {("Morgan Stanley", "LOCATED_IN", "New York"), ("Princeton", "LOCATED_IN", "New Jersey")},
        {("Maria Lopez", "LOCATED_IN", "New York"), ("Albert Einstein", "LOCATED_IN", "New Jersey")},
    ),
    (
        "a name before a noun in -ing is a compound, not an agent",
        None,
        "Congress approved NASA funding for the Artemis program.",
        set(),
        {("Congress", "APPROVED", "NASA")},
    ),
    (
        "an abbreviated country before another noun stays part of the name",
        None,
        "Blackstone acquired the UK unit of GE Capital.",
        set(),
        {("Blackstone", "ACQUIRED", "GE Capital")},
    ),
    (
        "an abbreviated country before a division noun says whose it is",
        None,
        "Ann Lee moved to the U.S. state of Michigan in 1990.",
        {("Ann Lee", "MOVED_TO", "Michigan"), ("Michigan", "PART_OF", "U.S.")},
        {("U.S. state", "PART_OF", "Michigan"), ("Ann Lee", "MOVED_TO", "U.S. state")},
    ),
    (
        "an abbreviated country before any appositive place noun says whose it is",
        None,
        "Ann Lee was born in the UK town of Reading.",
        {("Ann Lee", "BORN_IN", "Reading"), ("Reading", "LOCATED_IN", "UK")},
        {("Ann Lee", "BORN_IN", "UK town")},
    ),
    (
        "a recipient's 'to' after an object is a preposition of the verb",
        None,
        "Acme sold its chip unit to Intel in 2019.",
        {("Acme", "SOLD_CHIP_UNIT_TO", "Intel")},
        {("Intel", "SOLD_CHIP_UNIT_TO", "Acme")},
    ),
    (
        "a name after 'not' is the alternative ruled out",
        None,
        "Salesforce Inc, not Microsoft, acquired Slack in 2021.",
        {("Salesforce Inc", "ACQUIRED", "Slack")},
        {("Microsoft", "ACQUIRED", "Slack"), ("Microsoft", "ACQUIRED_IN", "2021")},
    ),
    (
        "a phrase after 'not' is ruled out",
        None,
        "Chinua Achebe was born in Ogidi, not in Lagos.",
        {("Chinua Achebe", "BORN_IN", "Ogidi")},
        {("Chinua Achebe", "BORN_IN", "Lagos")},
    ),
    (
        "neither ... nor states nothing of either",
        None,
        "Neither Amazon nor Google acquired Slack. Acme Corp acquired neither Slack nor Zoom.",
        set(),
        {("Amazon", "ACQUIRED", "Slack"), ("Google", "ACQUIRED", "Slack"), ("Acme Corp", "ACQUIRED", "Zoom")},
    ),
    (
        "a condition and what hangs on it state no fact",
        None,
        "If the deal is approved, Broadcom will acquire VMware. Had the regulators approved, Nvidia would have"
        " acquired Arm. Intel could have acquired Altera.",
        set(),
        {("Broadcom", "ACQUIRE", "VMware"), ("Nvidia", "ACQUIRED", "Arm"), ("Intel", "ACQUIRED", "Altera")},
    ),
    (
        "narrative 'would' states a fact",
        None,
        "Ann Lee would later become mayor of Paris.",
        {("Ann Lee", "MAYOR_OF", "Paris")},
        set(),
    ),
    (
        "an infinitive after a verb that does not imply it states nothing",
        None,
        "Microsoft failed to acquire Yahoo. Oracle refused to acquire Sun Microsystems.",
        set(),
        {("Microsoft", "ACQUIRE", "Yahoo"), ("Oracle", "ACQUIRE", "Sun Microsystems")},
    ),
    (
        "an infinitive after 'went on' happened",
        None,
        "Microsoft went on to acquire LinkedIn.",
        {("Microsoft", "ACQUIRE", "LinkedIn")},
        set(),
    ),
    (
        "a word that changes the role stays in the type",
        None,
        "Meta Platforms is the parent company of WhatsApp. Ann Lee became deputy mayor of Paris.",
        {("Meta Platforms", "PARENT_COMPANY_OF", "WhatsApp"), ("Ann Lee", "DEPUTY_MAYOR_OF", "Paris")},
        {("Meta Platforms", "COMPANY_OF", "WhatsApp"), ("Ann Lee", "MAYOR_OF", "Paris")},
    ),
    (
        "an object 'it' after an object that names nothing names no entity",
        None,
        "Nokia sold its handset business to Microsoft, which later wrote it off.",
        {("Nokia", "SOLD_HANDSET_BUSINESS_TO", "Microsoft")},
        {("Microsoft", "WROTE_OFF", "Nokia"), ("Microsoft", "WROTE", "Nokia")},
    ),
    (
        "a number and capitals written as one word stay in the name",
        None,
        "Heinz was acquired by Berkshire Hathaway and 3G Capital in 2013.",
        {("Heinz", "ACQUIRED_BY", "3G Capital"), ("Heinz", "ACQUIRED_BY", "Berkshire Hathaway")},
        {("Heinz", "ACQUIRED_BY", "Capital")},
    ),
    (
        "an ordinal opening a name is part of it",
        None,
        "21st Century Fox was purchased by Disney. Abraham Lincoln was the 16th President of the United States.",
        {("21st Century Fox", "PURCHASED_BY", "Disney"), ("Abraham Lincoln", "PRESIDENT_OF", "United States")},
        {("Century Fox", "PURCHASED_BY", "Disney")},
    ),
    (
        "a code with a letter suffix is one name",
        None,
        "Directive 95/46/EC was repealed by the General Data Protection Regulation.",
        {("Directive 95/46/EC", "REVOKED_BY", "General Data Protection Regulation")},
        {("EC", "REVOKED_BY", "General Data Protection Regulation")},
    ),
    (
        "an event noun with its doer after 'by' states the verb's relation",
        None,
        "The acquisition of LinkedIn by Microsoft was completed in December 2016.",
        {("Microsoft", "ACQUIRED", "LinkedIn")},
        {("LinkedIn", "ACQUIRED", "Microsoft")},
    ),
    (
        "an event noun's possessor with an 'of' object is its doer",
        None,
        "Germany's invasion of Poland began the war.",
        {("Germany", "INVADED", "Poland")},
        {("Poland", "INVADED", "Germany")},
    ),
    (
        "an event that did not happen states nothing",
        None,
        "Regulators blocked Nvidia's acquisition of Arm. The proposed takeover of Sprint by Comcast collapsed.",
        set(),
        {("Nvidia", "ACQUIRED", "Arm"), ("Comcast", "TOOK_OVER", "Sprint")},
    ),
    (
        "a name is no date's conjunct",
        None,
        "Alice Moreno and Raj Patel founded Veltrix in 2011 and Nordwind in 2015.",
        {("Alice Moreno", "FOUNDED", "Veltrix"), ("Raj Patel", "FOUNDED_IN", "2011")},
        {("Alice Moreno", "FOUNDED_IN", "Nordwind"), ("Raj Patel", "FOUNDED_IN", "Nordwind")},
    ),
    (
        "a thing of a year may be a date's conjunct",
        None,
        "Vittorio Zucca competed at the 1920 and the 1924 Summer Olympics.",
        {("Vittorio Zucca", "COMPETED_AT", "1924 Summer Olympics")},
        set(),
    ),
    (
        "a list of places set off by commas is no place and its unit",
        None,
        "Bell lived in three countries: the United States, Canada, and the United Kingdom. The finalists were"
        " Argentina, Australia, Costa Rica, Egypt, Germany, Iceland. Dell is based in Round Rock, Williamson County,"
        " Texas.",
        {("Williamson County", "LOCATED_IN", "Texas")},
        {("United States", "LOCATED_IN", "Canada"), ("Germany", "LOCATED_IN", "Iceland")},
    ),
    (
        "a chain of divisions and places joined before their unit keep their units",
        None,
        "Chul Khoshk is a village in Shahi Rural District, Sardasht District, Dezful County, Khuzestan Province, Iran."
        " Linville Falls Tavern is a historic tavern located at Avery County and McDowell County, North Carolina."
        " The wind farm Tatanka lies in Dickey County and McIntosh County, North Dakota, and McPherson County, South"
        " Dakota.",
        {
            ("Khuzestan Province", "LOCATED_IN", "Iran"),
            ("McDowell County", "LOCATED_IN", "North Carolina"),
            ("McPherson County", "LOCATED_IN", "South Dakota"),
        },
        set(),
    ),
    (
        "a place after a comma that starts a clause is its subject, not the unit",
        None,
        "Unlike Calcutta, which was located on the eastern coast of India, Delhi was at the centre of northern India."
        " Hank Snow was born in Nashville, Tennessee, and raised in Memphis.",
        {("Nashville", "LOCATED_IN", "Tennessee")},
        {("India", "LOCATED_IN", "Delhi")},
    ),
    (
        "the alternative after a ruled-out phrase stands",
        None,
        "Darwin sailed not on the Endeavour but on HMS Beagle.",
        {("Darwin", "SAILED_ON", "HMS Beagle")},
        {("Darwin", "SAILED_ON", "Endeavour")},
    ),
    (
        "a concession and a rule in the present state their facts",
        None,
        "Microsoft acquired GitHub in 2018, even if the deal drew criticism. If a breach is detected, the Security"
        " Team notifies the Data Protection Officer.",
        {("Microsoft", "ACQUIRED", "GitHub"), ("Security Team", "NOTIFIES", "Data Protection Officer")},
        set(),
    ),
    (
        "an object 'it' refers to the object before it",
        None,
        "Google developed Android in 2005. Samsung adopted it in 2009. Daimler acquired Chrysler in 1998. Acme Corp"
        " hired Tom Ray. Cerberus bought it in 2007.",
        {("Samsung", "ADOPTED", "Android")},
        {("Samsung", "ADOPTED", "Google"), ("Cerberus", "BOUGHT", "Tom Ray"), ("Cerberus", "BOUGHT", "Daimler")},
    ),
    (
        "an event noun without its doer leaves the clause's relation",
        None,
        "Julius Caesar completed the conquest of Gaul in 50 BC. The most remarkable creation of MTV is Madonna.",
        {("Julius Caesar", "COMPLETED", "Gaul"), ("MTV", "HAS_CREATION", "Madonna")},
        set(),
    ),
    (
        "a borough or district named or contained by the place before it says neither",
        None,
        "The Westminster borough of London contains Buckingham Palace. Ann Lee was born in the London borough of"
        " Camden.",
        set(),
        {
            ("London", "PART_OF", "Westminster"),
            ("London", "CONTAINS", "Buckingham Palace"),
            ("London borough", "PART_OF", "Camden"),
        },
    ),
    (
        "an object pronoun that would be its clause's subject names nothing, nor an older subject",
        None,
        "Google released Chrome in 2008. Firefox competed with it. Arm was founded in 1990. Nvidia tried to buy it"
        " and SoftBank kept it.",
        set(),
        {("Firefox", "COMPETED_WITH", "Google"), ("SoftBank", "KEPT", "Nvidia")},
    ),
    (
        "an indirect question and a verb joined to an unfulfilled one state nothing; a rule with 'must' does",
        None,
        "It is unclear whether Google or Microsoft acquired Slack. Microsoft tried to acquire Yahoo and merge it with"
        " MSN. If a breach occurs, the DPO must notify the Commission.",
        {("DPO", "NOTIFY", "Commission")},
        {("Google", "ACQUIRED", "Slack"), ("Microsoft", "MERGE_WITH", "MSN")},
    ),
    (
        "an event noun states its relation only where the sentence says it happened",
        None,
        "Nvidia's acquisition of Arm fell through in 2022. Lawmakers debated the repeal of the Affordable Care Act by"
        " Congress. After the acquisition of YouTube by Google, the site grew.",
        {("Google", "ACQUIRED", "YouTube")},
        {("Nvidia", "ACQUIRED", "Arm"), ("Congress", "REVOKES", "Affordable Care Act")},
    ),
    (
        "a 'not' after an object rules out the alternative hung on it, not the object",
        None,
        "Ann Lee met Bob Smith, not Carl Jones, in Paris.",
        {("Ann Lee", "MET", "Bob Smith")},
        {("Ann Lee", "MET", "Carl Jones")},
    ),
    (
        "a place before a settlement noun says where the settlement is, never its name",
        None,
        "Ann Cole was born in the Yorkshire town of Hebden Bridge.",
        {("Ann Cole", "BORN_IN", "Hebden Bridge")},
        {("Ann Cole", "BORN_IN", "Yorkshire town")},
    ),
    (
        "an alternative ruled out in apposition to a description is no end",
        None,
        "The winning bidder, not Microsoft, acquired Slack Technologies.",
        set(),
        {("Microsoft", "ACQUIRED", "Slack Technologies")},
    ),
    (
        "an object 'it' is no part of the object that holds it",
        None,
        "The Ross Ice Shelf was found in 1841. Charles Wilkes mapped a portion of it in 1840.",
        {("Charles Wilkes", "MAPPED", "Ross Ice Shelf")},
        set(),
    ),
    (
        "an event noun with its doer replaces the verb that only frames it",
        None,
        "Disney completed its purchase of 21st Century Fox in 2019.",
        {("Disney", "PURCHASED", "21st Century Fox")},
        {("Disney", "COMPLETED", "21st Century Fox")},
    ),
    (
        "a place named as a place before a division noun says whose it is",
        None,
        "Jay Park was born in the New York City borough of Brooklyn.",
        {("Jay Park", "BORN_IN", "Brooklyn"), ("Brooklyn", "PART_OF", "New York City")},
        {("New York City borough", "PART_OF", "Brooklyn"), ("Jay Park", "BORN_IN", "New York City borough")},
    ),
    (
        "a place before a settlement noun is where the settlement lies",
        None,
        "Acme has a factory in the Orange County city of Irvine.",
        {("Irvine", "LOCATED_IN", "Orange County")},
        {("Orange County city", "PART_OF", "Irvine"), ("Orange County", "PART_OF", "Irvine")},
    ),
    (
        "a name before a region noun is the region's own name",
        None,
        "The Kano state of Nigeria has a large population.",
        {("Kano state", "PART_OF", "Nigeria")},
        {("Nigeria", "PART_OF", "Kano state"), ("Nigeria", "LOCATED_IN", "Kano")},
    ),
    (
        "a place after 'of' only when nothing but an article or adjective comes between",
        None,
        "The U.S. state of Michigan borders Canada.",
        set(),
        {("Canada", "PART_OF", "U.S."), ("Canada", "PART_OF", "United States")},
    ),
    (
        "a region named before its noun is part of the place after 'of'",
        None,
        "Ceelmakoile is a town in the central Hiran region of Somalia.",
        {("Hiran region", "PART_OF", "Somalia")},
        {("Somalia", "PART_OF", "Hiran region")},
    ),
    (
        "a complement clause without 'that' keeps its subject",
        "Cape of Good Hope",
        "Contemporary geographic knowledge instead states the southernmost point of Africa is Cape Agulhas about 150"
        " kilometres (90 mi) to the east.",
        {("Africa", "HAS_POINT", "Cape Agulhas")},
        {("Africa", "HAS_POINT", "about 150 kilometres")},
    ),
]


@pytest.mark.parametrize("shape, title, text, expected, forbidden", SHAPES, ids=[s[0] for s in SHAPES])
def test_sentence_shapes(extractor, shape, title, text, expected, forbidden):
    got = triples(extractor.parse(text, title))
    assert expected <= got, f"{shape}: missing {expected - got}; got {got}"
    assert not (forbidden & got), f"{shape}: read backwards {forbidden & got}"


@pytest.mark.parametrize(
    "text",
    [
        "The cemetery grounds were assigned to the church.",  # two generic noun phrases: nothing to follow
        "Via the Red River, the Turtle River is part of the watershed.",  # a fronted phrase is circumstance
    ],
)
def test_no_row_between_generic_phrases(extractor, text):
    assert not extractor.parse(text).relations


def test_every_relation_keeps_its_predicate_sentence_and_confidence(extractor):
    result = extractor.parse("Hank Snow moved to Nashville. He recorded for RCA Victor.")
    by_pair = {(r.source, r.target): r for r in result.relations}
    moved = by_pair[("Hank Snow", "Nashville")]
    assert moved.predicate == "moved to" and moved.evidence == "Hank Snow moved to Nashville."
    assert moved.confidence == 1.0
    assert by_pair[("Hank Snow", "RCA Victor")].confidence < 1.0  # reached through "He"
