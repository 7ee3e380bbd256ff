"""Where the private-state notebooks (01-04, 07) depart from the study and its reference code.

One entry per departure (see :mod:`psit_lib.analysis.differences`); each PSIT notebook ends
with the entries that concern it. Where this workbench follows the reference code (fork turn,
candidate order, neutral system prompt, updater retries, statistics), the alternative is still a
notebook parameter, and that is said here too; where it follows it only in part (private CoT's
interleaved reasoning, the stored candidate, the branches after an unreadable reveal), the entry
says where it does not.
"""

from __future__ import annotations

from psit_lib.analysis.differences import Difference

ALL = ("01", "02", "03", "04", "07")
FORK = ("02", "03", "04")

DIFFERENCES: tuple[Difference, ...] = (
    Difference(
        point="Models",
        study="GPT-OSS 20B and 120B, Qwen3 32B and 235B, served through vLLM or OpenRouter.",
        here="The simulated model by default (psit-sim, SPEC §8); any OpenAI-compatible endpoint by "
             "configuration (PSIT_BACKEND, PSIT_BASE_URLS, PSIT_MODEL).",
        why="No model weights and no network on the machines the workbench must run on.",
        effect="Every default number is the simulator's; the study's numbers appear only as labelled "
               "reference columns. The simulator's assumptions are shown and swept in each notebook.",
        notebooks=ALL),
    Difference(
        point="Scale",
        study="50 episodes per (task, model, agent) cell.",
        here="10 per cell in 02 and 03, 4 in 04 by default; notebooks/params/study_scale.yaml runs 50.",
        why="The default run must finish in minutes on two cores.",
        effect="Wide intervals and few significant comparisons at default size; the study scale "
               "narrows them.",
        notebooks=FORK),
    Difference(
        point="Reading the host's replies during play",
        study="The Hangman player does not read the host's board (its letters follow a seeded order; the pattern "
              "is inferred from the transcript only when candidates are built at the fork); the Diagnosis player "
              "reads every answer (a yes when the reply contains 'yes', else a no when it contains 'no', else "
              "nothing learned) and narrows its candidate conditions and next questions by it.",
        here="Every reply is read (rule R), and play goes on to the fork whatever the host writes, as the "
             "study's player does. A reply that contradicts an earlier one is recorded (its move counts as "
             "made); a reply that cannot be read is recorded per turn (its move counts as made, nothing is "
             "learned from it: a Hangman host whose opening shows no board gives no word length, so no later "
             "reply can be checked). Compatible sets, candidates and the contradiction check use what could "
             "be read.",
        why="A public self-contradiction is the failure a public-only model shows, and it should be "
            "visible as such rather than hidden inside the fork's answers; what could not be read is a "
            "fact about the run (shown beside every rate), not an outcome.",
        effect="The workbook's strict view counts contradicting episodes as public_contradiction whatever the "
               "fork answers; the Table 1 column scores them by their fork answers, as the study does, so a "
               "host that contradicted itself in public but answers the fork consistently is self-consistent "
               "there and not in the strict view. Unreadable pre-fork replies no longer end an episode: with "
               "a model whose replies cannot be read, candidates rest on fewer constraints (more words fit), "
               "and the unreadable share beside each rate says how much of the run that was.",
        notebooks=FORK),
    Difference(
        point="Self-consistency rule",
        study="Self-consistent when the revealed secret's branch reply is exactly 'yes' (its candidate found "
              "exactly or by similarity >= 0.85), exactly one branch reply is exactly 'yes', and the revealed "
              "secret is not a substring of the host's pre-fork replies (SPEC §1 step 5).",
        here="Two views from the same records: Table 1's rule as the study's (the column beside the "
             "reference), and the workbook's stricter classification beside it, labelled: public "
             "contradiction first, yes/no read from a leading 'Yes.'/'No,' with unreadable answers their own "
             "outcome, whole-word leakage.",
        why="A number beside the paper's must be the paper's metric; the strict view names how an episode "
            "failed.",
        effect="The views differ on public contradictions (above), on answers such as 'Yes.' or 'Yes, it "
               "is' (a yes in the strict view, not in Table 1's), on secrets that occur inside a longer "
               "word of the host's replies (leakage only in Table 1's), and on two names of one DDXPlus "
               "condition offered as two candidates, as the reference offers them ('Heart attack' and "
               "'Possible NSTEMI / STEMI'): a host that says yes to both is over-confirmation in Table 1's "
               "view, as in the reference, and self-consistent in the strict view, which reads one secret. "
               "The simulated host names conditions by their dataset names, so offline no episode has two "
               "names of one condition; with a real model the Table 1 column counts them against the host "
               "as the study did.",
        notebooks=FORK),
    Difference(
        point="Reading the reveal for Table 1",
        study="The reference engine stores a Hangman reveal as its first lowercase [a-z]+ token and a Diagnosis "
              "reveal as the raw reply (which is also the reveal's candidate at the fork); its evaluator looks up "
              "the first run of letters, digits, spaces and hyphens of the stored reveal among the candidates "
              "(equal after normalising, else difflib ratio >= 0.85), and leakage searches the stored reveal as a "
              "substring of the host's replies.",
        here="Table 1's headline column reads the reveal by those rules (protocol/reference_reading.py), with "
             "the revealed candidate standing for the raw reply in Diagnosis, and the evaluator's ground-truth "
             "fallback: a reveal that matches no candidate but is at least 0.85 similar to the secret the agent's "
             "memory stored (the reveal itself when one contains the other) takes the stored secret's answer. The same rule on the workbook's "
             "own reading of the reveal (the dataset's name found in the reply) is kept beside it as a labelled "
             "alternative view (rate_workbook_reader in the Table 1 rate table).",
        why="A number beside the paper's must be scored as the paper scored it, including how literally it "
            "read the reply.",
        effect="The headline view credits fewer reveals than the workbook's reader: \"Cushing's Syndrome\" is "
               "read as 'cushing' (never self-consistent), \"**Sarcoidosis**\" scores 0.846 against its own "
               "candidate (no match), and \"The word is planet\" is stored as 'the' (a substring leak). Five "
               "DDXPlus names never match even written bare (the two with '/', Guillain-Barré with its accent, "
               "HIV with its parenthesis, Possible NSTEMI / STEMI), so on the simulator a host that picks them "
               "scores 0 in the headline view and is credited only in the alternative view; a model whose "
               "attractor is written with an apostrophe (Qwen3 32B's Cushing's) would otherwise look better "
               "than the paper for scoring reasons.",
        notebooks=FORK),
    Difference(
        point="Prompts",
        study="The study's prompts (its Appendix F and reference code): opener, guess or question, reveal, "
              "and 'Answer only with a single word: yes or no.' at the fork.",
        here="This workbook's own words with every instruction kept (an existing English word in lowercase "
             "letters only; a random, realistic, not obvious condition; reveal only when asked; pattern, lives "
             "and guessed letters after each guess; a one-word yes or no at the fork; the reveal as one "
             "lowercase word or the condition name only; the agents' Appendix F.2 guidance: the working memory's sections, "
             "read-only for workflow agents with no tags in a reply, save-before-you-reply and the secret in <secret> "
             "tags for autonomous agents, the updater's rules without telling it the secret must be stored, and each "
             "retrieval baseline's own full prompt around its memories). The study's exact wording can be run with "
             "'psit prompts from-reference PATH' on a local checkout of its repository (PSIT_PROMPTS_FILE). Added: "
             "the Hangman opener asks the host to show the "
             "blank pattern first, the diagnosis opener asks the host to start each answer with yes or no and "
             "to say when it is ready. Nothing else is added to the agents' prompts or the fork's questions "
             "(compared instruction by instruction with the reference's src/hangman/prompts/*.py: no 'stay "
             "consistent with your choices', no hint where to keep the secret, no 'the condition you chose "
             "at the start'). The memory updater gets its brief as a system message and the memory, dialogue, "
             "reasoning and answer as a user message (the reference sends them together as one user "
             "message). Templates and versions: studies/psit/prompts.toml (and the run metadata).",
        why="Prompts are written in the project's own words; the added requests let the player read the "
            "board and answers.",
        effect="Models see different wording, so rates are not paired with the study's; the added first "
               "pattern gives the player the word's length one reply earlier. The simulator draws its random "
               "numbers from the whole request, so new wording gives other draws with the same assumptions "
               "(episodes differ, rates move within sampling noise), and it answers a bare 'Yes' or 'No' "
               "when one word is asked for.",
        notebooks=ALL),
    Difference(
        point="Player's letter choice",
        study="Letters drawn from a mix of uniform and English-letter-frequency weights (mix 0.8), "
              "seeded by a fixed seed plus the trial index.",
        here="Frequency-weighted letters with probability 0.8, a uniform unguessed letter otherwise, "
             "seeded from the run seed and the episode id; the letter is chosen from the public state.",
        why="Our own player; seeds tie episodes to the run for resuming and caching.",
        effect="Different letter sequences, the same kind of game; rates are not paired with the study's.",
        notebooks=FORK),
    Difference(
        point="Candidate vocabulary (Hangman)",
        study="The reference code builds Hangman's compatible candidates from wordfreq's 300,000 most "
              "frequent English entries (top_n_list('en', 300000); about 261,000 are lowercase a-z words, "
              "about 36,000 of them with five letters), the first compatible ones in frequency order.",
        here="The 50,000 most frequent lowercase a-z words of 3 to 12 letters (about 6,000 with five "
             "letters), in the same frequency order, without the words of better_profanity's maintained "
             "profanity list, for the candidates, the compatible sets of notebook 01 and (in the simulator's "
             "own copy) the simulated host's words.",
        why="A smaller index keeps every constraint query fast on two cores; the most frequent compatible "
            "words, which the candidates are, are the same in both lists. wordfreq ranks swearing by use, so "
            "without the list profanity was among the candidates and the simulated host's common secrets.",
        effect="Candidates differ only when fewer than n_candidates - 1 compatible words are among the "
               "50,000 (then the study would offer rarer words where this run's fork has fewer candidates) "
               "or a listed word would be among the first compatible ones (then the next word is offered); "
               "compatible sets are smaller here (notebook 01's |C_t| and its P(self-consistent) for a "
               "re-imagining host are higher than with the study's list).",
        notebooks=("01", "02", "04")),
    Difference(
        point="Notebook 01's live fork turn",
        study="The fork comes at t_fork = 4 with the opener counted as turn 1 (three player guesses before "
              "it), as in notebooks 02-04.",
        here="Notebook 01's live section forks after t_fork player guesses (turn t_fork + 1, turn 5 by "
             "default), so its live fork meets the compatible sets of its theory sections, which count "
             "guesses.",
        why="Sections 2-4 compute |C_t| after t_fork guesses; the live fork is placed at the same point.",
        effect="One more guess before the fork narrows the compatible set, so a public-only host's live "
               "self-consistency is somewhat higher than at the study's fork turn and 01's live rates are not "
               "comparable cell by cell with 02's or Table 1's.",
        notebooks=("01",)),
    Difference(
        point="Candidate stored in memory",
        study="The last <secret> tag of the latest private state that has one, listed first, before the reveal; "
              "without a tag, a second model extracts the secret from the private notes. A stored secret that "
              "contains the reveal or is contained in it is one candidate: for Hangman the shorter of the two "
              "words, for Diagnosis the raw reply. A Diagnosis reveal at least 0.85 similar to the stored name is "
              "not listed at all.",
        here="The same tag, listed first; no model fallback. A stored secret that contains the reveal or is "
             "contained in it is one candidate, always the reveal in the host's words; a reveal similar to the "
             "stored name is still listed.",
        why="No hidden extra model call whose output would decide a candidate; the fork always asks about what "
            "the host revealed, so the workbook's view can read its answer.",
        effect="Agents that keep their secret untagged (private CoT, retrieval baselines) get no stored "
               "candidate; their candidate lists start with the revealed secret. Only a stored Hangman word "
               "inside the revealed one ('plan' for 'planet') or a stored condition name spelt close to the "
               "reveal is asked differently; the simulated host stores exactly what it reveals, so offline "
               "no episode is affected.",
        notebooks=FORK),
    Difference(
        point="Yes/no branches after an unreadable reveal",
        study="The reference engine asks every yes/no branch whatever the reveal returned, the reveal's literal "
              "text among the candidates (Hangman: the reply's first lowercase word, 'i' for \"I'd rather not "
              "say\"; Diagnosis: the whole reply).",
        here="The branches run too, about the stored secret and the compatible ones, and Table 1's rule scores "
             "them (the reveal gets no yes); a reply the workbook's reader finds no secret in is not asked "
             "about as if it were one. The workbook's strict view calls the episode unparseable.",
        why="A question such as \"is your word 'i'?\" tests nothing the study meant to test, and the reveal's "
            "text gets no yes in Table 1's rule unless it matches another candidate.",
        effect="Table 1's class of such an episode (leakage, state substitution or all denial) rests on the "
               "branches asked here, one candidate more from the dataset than the reference would ask. The "
               "simulator writes readable reveals in its default format, so offline it concerns only the "
               "formats that write otherwise.",
        notebooks=FORK),
    Difference(
        point="Private CoT's interleaved reasoning",
        study="The reference agent keeps only non-empty reasoning traces, in one list, and puts the k-th trace "
              "before the k-th earlier reply: after a turn without reasoning, every later trace moves one "
              "reply earlier.",
        here="The same layout (each reasoning in <thinking> tags before a reply, the default "
             "private_cot_layout), aligned by turn: a turn without reasoning keeps an empty place, so every "
             "trace stays before the reply it produced.",
        why="A trace shown before a reply it did not produce misstates the agent's own history; the study "
            "describes reasoning kept with its turn.",
        effect="None while the model returns reasoning every turn (the simulator always does). With a model "
               "that sometimes returns none, the reference would have shown misplaced traces here; such turns "
               "are flagged (no_reasoning) in run health.",
        notebooks=("02", "03", "04")),
    Difference(
        point="Candidate top-up",
        study="When the data gives too few compatible secrets, a separate model (GPT-OSS 120B) proposes "
              "more, and a fixed word list fills any gap.",
        here="The run's own model proposes more (role candidate_generator); each proposal is re-checked "
             "against the public constraints; no fixed list: an episode still short is recorded as such.",
        why="One model per run; a fixed list would add words that contradict the public record.",
        effect="Model-proposed and off-dataset candidates are counted and printed in notebook 03.",
        notebooks=FORK),
    Difference(
        point="Diagnosis: the condition the host chooses",
        study="The host chooses freely (a realistic, not obvious condition); real models sometimes choose "
              "conditions outside DDXPlus.",
        here="Free choice by default (a closed list of the 49 DDXPlus conditions is the condition_choice "
             "option). A reveal outside DDXPlus is kept as written; rule R cannot check it, so its "
             "compatibility is recorded as unknown. The simulated model's medical knowledge is DDXPlus, "
             "so offline its free choice always lands on a DDXPlus condition.",
        why="The study's protocol, with the dataset as the simulator's knowledge.",
        effect="Off-dataset reveals and attractors cannot appear offline; with a real model they are kept "
               "and reported (notebook 07 shows their share).",
        notebooks=("03", "04", "07")),
    Difference(
        point="How a fork branch starts",
        study="Each branch is a fresh agent of the same class: its LangGraph thread is seeded with update_state "
              "(the pre-fork messages and working memory, where private CoT keeps its reasoning too), then the "
              "turn runs on a thread of its own; a retrieval baseline's branch clones the library's memories and "
              "sliding window into a fresh agent.",
        here="Each branch is a LangGraph run from the pre-fork checkpoint's id on the episode's own thread (time "
             "travel): a new child checkpoint of it, which LangGraph never changes; a retrieval baseline's whole "
             "store is in that checkpoint. Each record keeps the thread and every turn's and branch's checkpoint "
             "with its parent.",
        why="One thread per episode makes the fork tree LangGraph's own lineage (recorded, and reopenable with "
            "PSIT_CHECKPOINTS=sqlite); the saver serialises every checkpoint, so no branch can see another's.",
        effect="None: every branch starts from the same public messages and private state as the study's; "
               "tables and scores on the simulator are those of the agents before this change.",
        notebooks=FORK),
    Difference(
        point="Private reasoning of the simulated host",
        study="Reasoning models write hundreds of tokens of reasoning per turn; private CoT keeps them all "
              "(about ten times the context of the memory agents, its Figure 3).",
        here="The simulated host writes about reasoning_tokens tokens per turn (profile knob, default 250) "
             "of neutral deliberation around its decision.",
        why="Without it the private-state-size figure could not show the overhead.",
        effect="Changes private CoT's state size and prompt tokens only: the padding draws no random "
               "numbers, so outcomes do not depend on it.",
        notebooks=("02", "03", "04")),
    Difference(
        point="Retrieval baselines' models and stores",
        study="Mem0 with Qdrant, LightMem with LLMLingua-2 compression and topic segmentation on GPU, "
              "A-Mem and MemoryOS with their default stores; the libraries call the served model.",
        here="The same libraries where installable, with in-process stores, the local all-MiniLM-L6-v2 "
             "embedder and every library call routed through the run's model client (cached, counted).",
        why="Offline, CPU only, and every model call must be visible in the run's accounting.",
        effect="Retrieval quality may differ from the study's; hidden calls are listed per episode.",
        notebooks=("02", "03", "04")),
    Difference(
        point="Embedding runtime",
        study="all-MiniLM-L6-v2 through sentence-transformers on PyTorch, one library call at a time.",
        here="The same weights exported to ONNX and run by ONNX Runtime on one thread, every episode's texts "
             "in shared batches, each distinct text embedded once per run (mean pooling and unit length as "
             "sentence-transformers does them).",
        why="One text at a time cost about twice the CPU per text and held the event loop's GIL; ONNX "
            "Runtime's vectors do not depend on the batch or the thread count, PyTorch's do (by up to "
            "2.4e-7), and batches form by timing, so only a batch-invariant runtime keeps runs reproducible.",
        effect="Vectors within 2.5e-7 of PyTorch's per component (cosine >= 0.9999998; "
               "tests/test_embedder.py); the default run's tables were compared with PyTorch's (the "
               "closing note of the change says which, if any, moved).",
        notebooks=("02", "03", "04")),
    Difference(
        point="LightMem's extraction during play",
        study="The reference code calls LightMem's add_memory with force_segment and force_extract after "
              "every reply, passing the whole sliding window (m = 10 recent messages) each time.",
        here="Segmentation and extraction are forced after every reply too (facts are retrievable from the "
             "second turn, so the pre-fork retrieved block is not empty), over that turn's two new "
             "messages; the earlier messages of the window were extracted on their own turns.",
        why="Passing the whole window again would extract the same messages up to five times; LightMem's "
            "own buffering (force_extract=False) would extract nothing before the default fork.",
        effect="Fewer duplicate entries than the reference run; retrieval still returns the top k = 10.",
        notebooks=("02", "03", "04")),
    Difference(
        point="Theorem illustration",
        study="The impossibility theorem is proved; its empirical side is the fork tests.",
        here="Notebook 01 illustrates it on simulated public-only agents and by exact enumeration of "
             "the fork outcome probabilities.",
        why="A reader can see the bound and the simulated agents meet it.",
        effect="Illustrative only; no reference numbers to compare.",
        notebooks=("01",)),
    Difference(
        point="Secret distribution (mode collapse)",
        study="Appendix E: the ten secrets revealed most often at the fork per game and model, counted over "
              "the main runs (every agent, 50 episodes each, at the run temperature T = 0.3); the text names "
              "the attractors (Hangman: python, planet, elephant, apple; diagnosis: Sarcoidosis for GPT-OSS "
              "120B and Qwen3 235B, PBC for GPT-OSS 20B, Cushing's for Qwen3 32B).",
        here="The same lists from this run's fork tests, 02, 03 and 04 (every agent they ran on their main models, "
             "each (task, model, agent) once, at their temperature; ties share a rank and a tie across the "
             "ten-secret cut is one row; the "
             "simulator-sweep episodes are left out), on the simulated model by default, whose choice follows "
             "its prior frequency ** (prior_exponent / T); the study's eight attractors are labelled reference "
             "rows beside this run's counts. A secret is named the most revealed only when a one-sided exact binomial test separates its count "
             "from the next one's (alpha 0.05); otherwise, as for a tie, no single attractor. The lists need "
             "02 and 03 (and 04 for the other agents) in the same run folder.",
        why="The study's own view of mode collapse, drawn from the run; the simulator needs some prior and "
            "word frequency is the plain choice.",
        effect="Offline the lists and any attractor are the simulator's prior and its prior_exponent (an "
               "assumption), not a model's; at the default 10 episodes per agent (50 at study scale) each "
               "list rests on fewer reveals than the study's, so its top counts are smaller and ties commoner.",
        notebooks=("07",)),
    Difference(
        point="Generated tokens of a host's reply on a real server",
        study="At most 2048 generated tokens per call (SPEC §1), the host's turns and the fork's answers included.",
        here="On a real endpoint every reply of a host (a turn of the game, the reveal, each yes/no) gets at most 512 tokens, "
             "the candidate generator's list 256 and the memory baselines' own JSON calls (A-MEM's note analysis and "
             "evolution, LightMem's extraction) 512, and every call stops at the chat templates' turn markers "
             "(psit_lib/llm/model_settings.py); a model's own max_tokens (PSIT_MODEL_SETTINGS) replaces the "
             "cap. The agent's own memory updates keep 2048; the simulator's requests are unchanged.",
        why="A reply that runs away holds a small server's slot for minutes at 2048 tokens and says nothing "
            "more; with two slots it stalled whole runs (in one real 02 run, 7 of the 8 replies of 2048 tokens "
            "were A-MEM's JSON repeating one key; in another, 9 of 25 host turns ran to 2048 repeating the board, "
            "and four of them in one history overflowed the slot's 8,192-token context, failing the episode). "
            "The test models' well-formed host turns are under 30 tokens.",
        effect="None on the simulator. On a real model, a host reply longer than 512 tokens is cut (finish_reason "
               "length) and read as written (a baseline's JSON cut there was unreadable to it at 2048 too); a "
               "reasoning model that thinks at length before answering needs its own max_tokens in "
               "PSIT_MODEL_SETTINGS. A cell run under the cap, or whose host replies were cut in more than 10% of its "
               "episodes, is marked not comparable and left out of the claims ledger (docs/protocol.md §9); psit run "
               "says so before it starts.",
        notebooks=FORK + ("07",)),
    Difference(
        point="Temperature sweep (this workbook's extension)",
        study="Not measured: the study reports the secrets revealed at its run temperature only (T = 0.3).",
        here="A quick experiment added by this workbook: the opener, then an immediate reveal (no game), "
             "n_samples times per task, model and temperature of a sweep (default 0.1 to 1.5, 40 samples), "
             "with the vanilla agent; entropy and effective number with bootstrap intervals (none "
             "where the interval excludes its estimate), the top share with a Wilson interval, a chi-square test against a frequency prior and "
             "uniform, and a reading of the coldest against the hottest temperature by the bootstrap "
             "interval of their entropy gap (no verdict where either end's entropy sits at its log2(n) ceiling or "
             "its own bootstrap interval misses its estimate: the same resampling cannot decide the gap).",
        why="Mode collapse is a claim about how peaked the choice is; the sweep shows how the peak moves with "
            "the sampling temperature.",
        effect="Its tables and readings have no counterpart in the study and are never compared with it; on "
               "the simulator entropy rises with temperature by construction (SPEC §8).",
        notebooks=("07",)),
)
