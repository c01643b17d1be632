"""What is wrong with the way a student's backward pass walks a graph: the pending
counts it starts from (``counting_problem``) and the order of its rule calls
(``order_problem``). Each answer is a sentence that says what to change, or None.
"""


def counting_problem(run, counts):
    """When the first ``Pending`` the engine made started from wrong counts, a sentence
    that points at ``count_pending`` (else None)."""
    if not counts:
        return None
    right = {node: 0 for node in run.nodes()}
    for node in run.nodes():
        for x in node.inputs:
            if run.producer(x) in right:
                right[run.producer(x)] += 1
    for node, count in right.items():
        given = counts[0].get(node)
        if isinstance(given, int) and given != count:
            uses = "use of its output waits" if count == 1 else "uses of its output wait"
            why = ("Did count_pending visit a node more than once, when it is reached along "
                   "two paths? Keep a set of the nodes seen, and count a node's inputs only "
                   "the first time you meet it." if given > count else
                   "Does count_pending count every input edge of every node (a node that "
                   "reads a value twice counts twice)?")
            return (f"your pending counts are wrong before the pass begins: the Pending you "
                    f"made gives {run.label(node)} {given}, but {count} {uses} to report. "
                    f"{why}")
    return None


def order_problem(run, calls):
    """Was each rule called once, after all the nodes that use its outputs?"""
    nodes = run.nodes()
    index = {}
    for position, (node, _) in enumerate(calls):
        if node in index:
            times = sum(1 for called, _ in calls if called is node)
            return (f"you ran the rule of {run.label(node)} {_times(times)}. A node's rule runs "
                    f"once, when its gradient is complete: count how many uses of its outputs "
                    f"are still to report (its pending count), and run it when that reaches 0.")
        index[node] = position
    consumers = {node: [] for node in nodes}
    for node in nodes:
        for x in node.inputs:
            parent = run.producer(x)
            if parent is not None and parent in consumers:
                consumers[parent].append(node)
    for node, position in index.items():
        for user in consumers.get(node, ()):
            if user in index and index[user] > position:
                return (f"you ran the rule of {run.label(node)} before that of {run.label(user)}, "
                        f"which uses its output: the cotangent {run.label(node)} got was not "
                        f"complete yet. Run a node's rule only when every node that uses its "
                        f"outputs has run its own (its pending count is 0).")
    missing = [n for n in nodes if n not in index and _reaches_source(run, n)]
    if missing and len(nodes) < 100:
        return (f"the rule of {run.label(missing[0])} never ran, though the target depends on it "
                f"and it leads to a source: its pending count never reached 0? Count only "
                f"the uses by nodes that the target depends on.")
    return None


def _times(count):
    """``twice``, ``three times``, ``12 times``: how often a rule ran (all its calls)."""
    words = {2: "twice", 3: "three times", 4: "four times", 5: "five times"}
    return words.get(count, f"{count:,} times")


def _reaches_source(run, node):
    """Does ``node`` depend on a source (through any of the nodes it reads from)?"""
    ids = {s.id for s in run.sources}
    return any(x.id in ids for n in run.upstream(node.outputs) for x in n.inputs)
