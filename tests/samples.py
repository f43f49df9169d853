"""Sample documents shared by tests: one reST/Markdown page with every kind of unit."""

FILLER = " ".join(f"Sentence {w} talks about templates and widgets at some length." for w in "abcdefghij")

RST = f"""Caching
=======

{FILLER}

The cache key may be at most 250 characters long. It is not checked on Windows.
{FILLER}

To enable the cache, follow these steps:

#. Install the backend with pip.
#. Add it to ``CACHES`` and set
   ``TIMEOUT`` to 300 seconds.

Then configure the location::

    CACHES = {{
        "default": {{"LOCATION": "127.0.0.1:11211"}},
    }}

.. versionchanged:: 5.1

    The location may only be a socket path on Linux.

```
fenced = "code"

still fenced
```

| Backend | Max key (chars) |
|---|---|
| memcached | 250 |
"""
