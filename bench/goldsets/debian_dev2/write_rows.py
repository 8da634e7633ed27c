import json
def row(c, i, q, exp, src, anchor, ans, para=None, qt="factoid", note=None):
    kind = "paraphrase" if para else "pointer"
    r = {"id": f"{c}_{'x' if para else 'd'}{i:02d}", "corpus": c, "query": q, "expected": exp, "match": "any",
         "expected_sources": [src], "anchor_doc": anchor, "paraphrase_of": para, "answer": ans,
         "dimensions": {"kind": kind, "split": "dev", "question_type": qt, "difficulty": "hard"}}
    if note: r["note"] = note
    return r
G = [
 (1, "The list of main porcelain commands includes one that shows changes between commits, commit and working tree, etc. In its simplest form, with no commits given, what are the changes you see relative to?", ["view the changes you made relative to the index"], "git-diff.txt", "cmds-mainporcelain.txt", "The index (staging area for the next commit)."),
 (2, "The cherry-pick manual's see-also section points to the command for the opposite operation. What does that command require of the working tree before it runs?", ["This requires your working tree to be clean"], "git-revert.txt", "git-cherry-pick.txt", "A clean working tree (no modifications from the HEAD commit)."),
 (3, "To get started with Git's web interface, its manual says to run a helper script from a repository. Which option of that helper keeps its web server reachable only from the local machine?", ["Only bind the web server to the local IP"], "git-instaweb.txt", "gitweb.txt", "-l / --local binds the web server to 127.0.0.1."),
 (4, "The gitmodules manual page ends by saying it is part of a suite. How does the suite's main page describe Git in its first sentence?", ["fast, scalable, distributed revision control system"], "git.txt", "gitmodules.txt", "A fast, scalable, distributed revision control system with an unusually rich command set."),
 (5, "Among the commands for interacting with foreign SCMs, one imports a GNU Arch repository into Git. What does it do when it cannot find the remote branch a merge comes from?", ["it will just import it as a regular commit"], "git-archimport.txt", "cmds-foreignscminterface.txt", "It imports it as a regular commit."),
 (6, "The list of low-level commands that manipulate objects includes one that registers file contents in the working tree to the index. What does its manual say about a friendlier alternative?", ["for a more user-friendly way to do some of the most common operations on the index"], "git-update-index.txt", "cmds-plumbingmanipulators.txt", "git add is a more user-friendly way to do the most common index operations."),
 (7, "git show-ref's see-also list ends with the page describing what a repository looks like on disk. In how many flavours does a Git repository come?", ["A Git repository comes in two different flavours"], "gitrepository-layout.txt", "git-show-ref.txt", "Two: a .git directory at the root of the working tree, or a bare <project>.git directory."),
 (8, "The fast-import manual's see-also names the program that dumps revisions in a form fast-import reads. Besides a format to edit for history rewrites, what can that program's output serve as?", ["as a human-readable bundle replacement"], "git-fast-export.txt", "git-fast-import.txt", "A human-readable bundle replacement."),
 (9, "git merge-tree says it is low-level plumbing similar to several other commands, and can be used in a series of steps that build a new commit. One of those commands creates a tree object from the current index: what state must the index be in?", ["The index must be in a fully merged state"], "git-write-tree.txt", "git-merge-tree.txt", "Fully merged."),
 (10, "git init installs sample hook files that are disabled by default and points elsewhere for general information on hook execution. What happens to a hook program that is not marked executable?", ["Hooks that don't have the executable bit set are ignored"], "githooks.txt", "git-init.txt", "It is ignored."),
 (11, "git diff refers to another page for a more complete list of ways to spell a commit. For commands that walk the revision graph, what does a revision parameter denote?", ["all commits which are reachable from that commit"], "gitrevisions.txt", "git-diff.txt", "All commits reachable from that commit (for other commands, a specific commit)."),
 (12, "The user manual shows how to see the list of branch heads of a repository with one command. When that command lists branches, how is the current branch shown?", ["the current branch will be highlighted in green"], "git-branch.txt", "user-manual.txt", "Highlighted in green and marked with an asterisk."),
 (13, "Among the helper commands, one adds or parses structured information in commit messages. What do those lines look similar to, and where in the message do they go?", ["look similar to RFC 822 e-mail headers"], "git-interpret-trailers.txt", "cmds-purehelpers.txt", "They look like RFC 822 e-mail headers, at the end of the free-form part of the message."),
 (14, "git pack-redundant's see-also lists first the command that writes packed archives. Inside such an archive, how can an individual object be stored?", ["either stored as a compressed whole or as a difference from some other object"], "git-pack-objects.txt", "git-pack-redundant.txt", "As a compressed whole, or as a delta against another object."),
 (15, "gitworkflows warns that a topic that has been merged elsewhere should not be rebased and points to a section about recovering from that. Why is rewriting a branch that others have based work on a bad idea?", ["anyone downstream of it is forced to manually fix their history"], "git-rebase.txt", "gitworkflows.txt", "Everyone downstream must fix their history by hand."),
 (16, "The chunk-based file format used by the commit-graph and the MIDX refers to the documentation of another format. Over a repository's lifetime, what happens to loose objects and smaller packs?", ["smaller packs are consolidated into larger pack(s)"], "gitformat-pack.txt", "gitformat-chunk.txt", "They are consolidated into larger packs."),
 (17, "The list of guides includes one about tweaking diff output. What is the manipulation that the diff commands can apply before showing output collectively called?", ["The manipulation is collectively called"], "gitdiffcore.txt", "cmds-guide.txt", "diffcore transformation."),
 (18, "The pretty formats' author-name placeholders that respect .mailmap refer to the command that summarizes log output. When that command is run outside a repository, where does it look for the mapping file?", ["file in the current directory"], "git-shortlog.txt", "pretty-formats.txt", "In the current directory."),
 (19, "The CVS migration guide's see-also lists several tutorials, one of them about the low-level core commands. If you only need Git as a revision control system, what does that tutorial suggest starting with instead?", ["A Tutorial Introduction to Git"], "gitcore-tutorial.txt", "gitcvs-migration.txt", "A Tutorial Introduction to Git (gittutorial(7)), or the Git User Manual."),
 (20, "git switch's --detach option is for inspecting a commit and discardable experiments, and refers to a section of another manual for details. What does HEAD normally refer to?", ["normally refers to a named branch"], "git-checkout.txt", "git-switch.txt", "A named branch (e.g. master)."),
 (21, "git blame's section on mapping authors only points elsewhere. In the file that does the mapping, how do you write a comment?", ["character begins a comment to the end of line"], "gitmailmap.txt", "git-blame.txt", "With '#', which comments to the end of the line."),
 (22, "gitweb's configuration file page notes that some configuration can be controlled per repository rather than gitweb-wide, and points to a subsection elsewhere. How do you configure an individual repository shown in gitweb?", ["You can configure individual repositories shown in gitweb by creating file"], "gitweb.txt", "gitweb.conf.txt", "By creating files in the repository's GIT_DIR, or by setting repo configuration variables."),
]
GP = {  # paraphrases: the asker's words
 1: "I ran the command that lists what changed, without giving it any commits. What exactly is it comparing my files against?",
 2: "Before I can undo an earlier commit by making a new one, what state do my files need to be in?",
 3: "How do I make the quick browse-my-repo web server listen only on my own machine?",
 5: "When bringing history over from that old Arch version control system, what happens to a merge whose source branch can't be found?",
 7: "What kinds of on-disk setups can a repository have, and how many are there?",
 10: "I renamed a sample hook so it should run, but nothing happens. What could make Git skip it?",
 12: "When I list my branches, how can I tell which one I'm on?",
 14: "In the compressed bundles of objects Git writes, are objects always saved in full?",
 15: "Why shouldn't I rewrite history on a branch my teammates built their work on?",
 19: "For someone who just wants version control, which introduction does the low-level tutorial recommend reading first?",
 21: "How do I leave a note to myself in the file that maps author names?",
}
P = [
 (1, "pathlib's table of corresponding tools maps an os.path function to Path.expanduser and Path.home. On Unix, if HOME is not set, where does that os.path function look up the current user's home directory?", ["home directory is looked up in the password directory"], "os.path.rst.txt", "pathlib.rst.txt", "In the password directory, through the pwd module."),
 (2, "Since Python 3.3 the debugger offers tab-completion of commands and arguments through another module. What does that module provide functions for?", ["completion and reading/writing of history files from the Python interpreter"], "readline.rst.txt", "pdb.rst.txt", "Completion and reading/writing of history files from the interpreter."),
 (3, "calendar.itermonthdays3 is like itermonthdates but not restricted by the range of a standard date type. What does that type's constructor require of its arguments?", ["All arguments are required. Arguments must be integers"], "datetime.rst.txt", "calendar.rst.txt", "Three required integer arguments in range (MINYEAR <= year <= MAXYEAR, 1 <= month <= 12, valid day)."),
 (4, "The event loop's create_server makes a TCP server with a particular socket type constant. Where are such socket type constants used?", ["These constants represent the socket types, used for the second argument to"], "socket.rst.txt", "asyncio-eventloop.rst.txt", "They are the socket types, used as the second argument to socket()."),
 (5, "A SpooledTemporaryFile's _file attribute is either an in-memory bytes buffer or a text wrapper object, depending on mode. What is that text wrapper?", ["A buffered text stream providing higher-level access to a"], "io.rst.txt", "tempfile.rst.txt", "A buffered text stream giving higher-level access to a buffered binary stream."),
 (6, "The operator module's attrgetter and itemgetter make fast field extractors for map, sorted and an iterator tool that groups consecutive elements. What does that grouping tool generally need from its input?", ["the iterable needs to already be sorted on the same key function"], "itertools.rst.txt", "operator.rst.txt", "The input must already be sorted on the same key function."),
 (7, "IsADirectoryError corresponds to an errno constant. How does the errno documentation describe that constant?", ["Is a directory. This error is mapped to the exception"], "errno.rst.txt", "exceptions.rst.txt", "'Is a directory', mapped to IsADirectoryError."),
 (8, "An IMAP4 method supports a hostname check since Python 3.4 through an SSL context attribute. What does that attribute decide?", ["Whether to match the peer cert's hostname"], "ssl.rst.txt", "imaplib.rst.txt", "Whether to match the peer certificate's hostname in do_handshake()."),
 (9, "The uu module is deprecated and the documentation names a modern alternative. Besides the RFC 4648 encodings, which encodings does that alternative support?", ["the de-facto standard Ascii85 and Base85 encodings"], "base64.rst.txt", "uu.rst.txt", "Ascii85 and Base85."),
 (10, "The built-in repr() raises RuntimeError if a certain interpreter hook is not accessible. When is that hook called?", ["is called on the result of evaluating an"], "sys.rst.txt", "functions.rst.txt", "On the result of evaluating an expression entered in an interactive session."),
 (11, "_thread.interrupt_main simulates a signal arriving in the main thread; without an argument it simulates a default one. What does that default signal mean?", ["Interrupt from keyboard (CTRL + C)"], "signal.rst.txt", "_thread.rst.txt", "Interrupt from keyboard (CTRL + C)."),
 (12, "ZipFile raises RuntimeError when the module for the ZIP_LZMA method is not available. Which file formats does that module's file interface support?", ["Also included is a file interface supporting the"], "lzma.rst.txt", "zipfile.rst.txt", "The .xz and legacy .lzma formats used by the xz utility, and raw streams."),
 (13, "The deprecated cgi module's FieldStorage can be replaced for GET and HEAD requests by a function from another module. In what form does that function return the data?", ["Data are returned as a list of name, value pairs"], "urllib.parse.rst.txt", "cgi.rst.txt", "A list of (name, value) pairs."),
 (14, "asyncio.to_thread propagates the current context object to the separate thread. What does creating that kind of object with no arguments give you, and does every thread share one?", ["creates an empty context with no values in it", "Every thread will have a different top-level"], "contextvars.rst.txt", "asyncio-task.rst.txt", "An empty context; every thread has its own top-level context."),
 (15, "A multiprocessing manager can create a shared lock object from the threading module and return a proxy for it. In which state is such a primitive lock created?", ["It is created in the unlocked state"], "threading.rst.txt", "multiprocessing.rst.txt", "Unlocked (it is either locked or unlocked)."),
 (16, "typing.MutableMapping is deprecated since 3.9 because the abstract base class it is a generic version of now supports subscripting. How does that ABC's documentation describe it together with its read-only counterpart?", ["ABCs for read-only and mutable"], "collections.abc.rst.txt", "typing.rst.txt", "ABCs for read-only and mutable mappings."),
 (17, "The pickle documentation compares it with a more primitive serialization module whose main job is to support .pyc files. Is that module's format documented?", ["Details of the format are undocumented on purpose"], "marshal.rst.txt", "pickle.rst.txt", "No, it is undocumented on purpose and may change between versions."),
 (18, "pkgutil's emulation of the classic import algorithm is deprecated because the standard import mechanism is available in another package. What is the first purpose of that package?", ["which is portable to any Python interpreter"], "importlib.rst.txt", "pkgutil.rst.txt", "To implement the import statement in Python source code, portable to any Python interpreter."),
 (19, "The chapter on numeric and mathematical modules says one module defines an abstract hierarchy of numeric types. Are the types it defines meant to be instantiated?", ["None of the types defined in this module are intended to be instantiated"], "numbers.rst.txt", "numeric.rst.txt", "No."),
 (20, "The built-in types page says generators and a decorator from another module give a convenient way to implement the context management protocol. What does that decorator let you define?", ["can be used to define a factory"], "contextlib.rst.txt", "stdtypes.rst.txt", "A factory function for with-statement context managers, without a class or separate __enter__/__exit__ methods."),
 (21, "The signal module's Signals enum is a collection of SIG* constants built on an integer enum type. What happens to a member of that type when an integer operation is performed on it?", ["the resulting value loses its enumeration status"], "enum.rst.txt", "signal.rst.txt", "The result loses its enumeration status."),
 (22, "os.popen is described as a simple wrapper around a class of another module. On POSIX, how does that class execute the child program?", ["Execute a child program in a new process"], "subprocess.rst.txt", "os.rst.txt", "In a new process, with os.execvpe-like behaviour."),
]
PP = {
 1: "If my environment has no home variable, how does Python figure out where a tilde in a path should point?",
 2: "The debugger can complete what I type with the tab key; what else does the module behind that do for the interactive interpreter?",
 5: "When a temporary file that starts in memory is opened in text mode, what kind of object is actually holding the data?",
 6: "Before grouping consecutive items with the standard iterator tool, what do I need to do to my data?",
 9: "The old uuencode module is going away; what extra encodings does its suggested replacement offer?",
 11: "If I simulate an interruption of the main thread without saying which one, what does it act like?",
 13: "Old CGI form parsing is deprecated; what shape does the replacement give me for a query string?",
 15: "When a lock is first made, is it held or free?",
 17: "Can I rely on the format Python uses for its compiled files staying the same or being written down anywhere?",
 19: "Can I create objects directly from the abstract number classes?",
 21: "If I add a number to a member of an integer enumeration, is the result still an enumeration member?",
}
for c, rows, paras in (("git", G, GP), ("python", P, PP)):
    out = []
    by = {}
    for i, q, exp, src, anchor, ans in rows:
        r = row(c, i, q, exp, src, anchor, ans); out.append(r); by[i] = r
    for i, q in paras.items():
        b = by[i]
        out.append(row(c, i, q, b["expected"], b["expected_sources"][0], b["anchor_doc"], b["answer"], para=b["id"]))
    with open(f"bench/goldsets/debian_dev2/{c}.jsonl", "w") as f:
        for r in out: f.write(json.dumps(r) + "\n")
    print(c, len(out))
