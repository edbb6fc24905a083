#!/usr/bin/env python3
"""stream_marks.py - walk a git fast-import stream honouring `data` byte
counts and delimiters, so that lines inside blob or message bytes are never
taken for commands.

As a module: `walk(path)` yields Record objects, one per top-level command
that can carry a mark (blob, commit, tag, alias), with kind, mark, the
original-oid, the ref and the payload offsets of its data.

As a script:
    stream_marks.py marks STREAM     # '<kind> :<mark> <original-oid>' lines
    stream_marks.py data STREAM      # '<offset> <length> <kind>' per payload
    stream_marks.py summary STREAM   # counts per command
Standard library only.
"""

import sys


class StreamError(Exception):
    pass


class Record:
    __slots__ = ("kind", "ref", "mark", "original_oid", "offset")

    def __init__(self, kind, ref, offset):
        self.kind = kind          # 'blob', 'commit', 'tag', 'alias'
        self.ref = ref            # commit ref / tag name / None
        self.mark = None          # int or None
        self.original_oid = None  # bytes-decoded str or None
        self.offset = offset      # byte offset of the command line


class Reader:
    def __init__(self, f):
        self.f = f
        self.off = 0
        self.pending = None  # a line pushed back

    def readline(self):
        if self.pending is not None:
            line, self.pending = self.pending, None
            return line
        line = self.f.readline()
        self.off += len(line)
        return line

    def unread(self, line):
        self.pending = line

    def read_exact(self, n):
        chunks = []
        left = n
        while left:
            b = self.f.read(min(left, 1 << 20))
            if not b:
                raise StreamError("data ends early at byte offset %d" % self.off)
            chunks.append(len(b))
            self.off += len(b)
            left -= len(b)
        return n

    def skip_optional_lf(self):
        line = self.readline()
        if line == b"\n":
            return
        if line:
            self.unread(line)


def read_data(r, line, data_events):
    """line is a 'data ...' command line; consume the payload."""
    arg = line[5:].rstrip(b"\n")
    if arg.startswith(b"<<"):
        delim = arg[2:] + b"\n"
        start = r.off
        length = 0
        while True:
            l = r.readline()
            if not l:
                raise StreamError("delimited data without %r" % delim)
            if l == delim:
                break
            length += len(l)
        data_events.append((start, length))
    else:
        n = int(arg)
        start = r.off
        r.read_exact(n)
        data_events.append((start, n))
    r.skip_optional_lf()


def walk(path, data_events=None, counts=None):
    """Yield a Record for every blob/commit/tag/alias command."""
    if data_events is None:
        data_events = []
    with open(path, "rb") as f:
        r = Reader(f)
        cur = None
        while True:
            line_off = r.off if r.pending is None else r.off - len(r.pending)
            line = r.readline()
            if not line:
                break
            word = line.split(b" ", 1)[0].rstrip(b"\n")
            if counts is not None and not line.startswith((b"M ", b"D ", b"R ", b"C ", b"N ")):
                counts[word] = counts.get(word, 0) + 1
            if line.startswith(b"data "):
                read_data(r, line, data_events)
                continue
            if word in (b"blob", b"commit", b"tag", b"alias"):
                if cur is not None:
                    yield cur
                ref = line[len(word) + 1:].rstrip(b"\n").decode("utf-8", "replace") or None
                cur = Record(word.decode(), ref, line_off)
                continue
            if line.startswith(b"mark :") and cur is not None and cur.mark is None:
                cur.mark = int(line[6:].rstrip(b"\n"))
                continue
            if line.startswith(b"original-oid ") and cur is not None:
                cur.original_oid = line[13:].rstrip(b"\n").decode("ascii", "replace")
                continue
            if word in (b"reset", b"feature", b"option", b"progress",
                        b"checkpoint", b"done", b"get-mark", b"cat-blob") \
                    or (word == b"ls" and cur is None):
                if cur is not None:
                    yield cur
                    cur = None
                if word == b"done":
                    break
                continue
            # everything else belongs to the current command (from, merge,
            # author, M/D/C/R/N, ...), or is a comment or a blank line.
        if cur is not None:
            yield cur


def main(argv):
    if len(argv) != 3 or argv[1] not in ("marks", "data", "summary"):
        sys.stderr.write(__doc__)
        return 2
    what, path = argv[1], argv[2]
    try:
        if what == "marks":
            for rec in walk(path):
                if rec.mark is not None and rec.original_oid is not None:
                    print("%s :%d %s" % (rec.kind, rec.mark, rec.original_oid))
        elif what == "data":
            events = []
            recs = walk(path, events)
            for _ in recs:
                pass
            for start, n in events:
                print("%d %d" % (start, n))
        else:
            counts = {}
            for _ in walk(path, None, counts):
                pass
            for k in sorted(counts):
                print("%s %d" % (k.decode("utf-8", "replace"), counts[k]))
    except StreamError as ex:
        sys.stderr.write("stream_marks.py: %s: %s\n" % (path, ex))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
