"""A traced call left by an exception ends with ``"args":{"outcome":"raised"}``
on its ``E``, as a woven C++ function does; calls that return, and a call
that catches the exception, end as usual."""


def test_a_call_left_by_an_exception_ends_raised(program):
    program.run(
        """
        import perfflow

        @perfflow.trace
        def fails(n):
            if n == 2:
                raise KeyError(n)
            return n

        @perfflow.trace
        def passes(n):
            return fails(n)

        @perfflow.trace
        def handles(n):
            try:
                return passes(n)
            except KeyError:
                return -1

        @perfflow.trace
        def numbers():
            yield 1
            raise ValueError("no more")

        for n in range(3):
            handles(n)
        try:
            list(numbers())
        except ValueError:
            pass
        try:
            with perfflow.region("send", scope="net", flow="out"):
                raise OSError("down")
        except OSError:
            pass
        """
    )
    events = program.only_trace()
    ends = [
        (e["name"], e.get("args", {}).get("outcome"))
        for e in events
        if e["ph"] == "E"
    ]
    assert sorted(ends, key=lambda end: (end[0], end[1] or "")) == [
        ("fails", None),
        ("fails", None),
        ("fails", "raised"),
        ("handles", None),
        ("handles", None),
        ("handles", None),
        ("numbers", None),
        ("numbers", "raised"),
        ("passes", None),
        ("passes", None),
        ("passes", "raised"),
        ("send", "raised"),
    ]
    # The raised ends are those of the third call: fails, then passes.
    raised = [name for name, outcome in ends if outcome == "raised"]
    assert raised == ["fails", "passes", "numbers", "send"]
