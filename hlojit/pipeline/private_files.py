"""Files only this user can write: the compile cache's folder and entries, the IR of a failed compile.

A vmfb is machine code that IREE maps and runs, and no checksum tells a planted one from a genuine one:
what keeps another user's code out of this process is that hlojit reads only what nobody else can write.
Folders are made 0700; a folder or file that another user owns, or that group or others may write, is
refused. Files are opened without following a link and without blocking, and read only when they are
regular files (a FIFO in the cache folder would hang the first call, a link to /dev/zero fill the memory).
"""
from __future__ import annotations

import errno
import os
import stat


class Refused(OSError):
    """A file that is not this user's regular file alone to write: never read."""


def user_id() -> int:
    return os.geteuid()


def trust_problem(st: os.stat_result, what: str) -> str | None:
    """Why a file or folder with this status must not be trusted, else None."""
    if st.st_uid != user_id():
        return f"{what} is owned by user {st.st_uid}, not by this user ({user_id()})"
    writers = [who for who, bit in (("group", stat.S_IWGRP), ("others", stat.S_IWOTH)) if st.st_mode & bit]
    if writers:
        return f"{what} is writable by {' and '.join(writers)} (mode {stat.S_IMODE(st.st_mode):04o})"
    return None


def folder_problem(path: str, follow_links: bool = True) -> str | None:
    """Why the folder at `path` must not be used, else None (a missing folder is no problem: nothing is read
    from it). `follow_links=False` refuses a link too: in a folder others can write (the temp folder) a link
    is how someone else's folder, or a folder of this user's they chose, would be slipped in."""
    try:
        st = os.stat(path) if follow_links else os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as e:
        return f"cannot look at it ({e})"
    if stat.S_ISLNK(st.st_mode):
        return "it is a symbolic link"
    if not stat.S_ISDIR(st.st_mode):
        return "it is not a folder"
    return trust_problem(st, "the folder")


def private_folder(path: str, follow_links: bool = True) -> str | None:
    """Create the folder `path` 0700 when it is missing (its missing parents with the default mode); return
    why it cannot be used (another user's, writable by others, or not creatable), else None."""
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
    except OSError as e:
        return f"cannot create it ({e})"
    return folder_problem(path, follow_links)


def read_regular(path: str) -> bytes:
    """The bytes of the regular file `path`, opened without blocking and without following a link. Raises
    FileNotFoundError when there is none, Refused for a link, a FIFO, a device or a file another user owns
    or may write, OSError for the rest."""
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as e:
        if e.errno == errno.ELOOP:    # what O_NOFOLLOW answers for a link
            raise Refused("it is a symbolic link") from None
        raise
    with os.fdopen(handle, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise Refused("it is not a regular file")
        problem = trust_problem(st, "the file")
        if problem:
            raise Refused(problem)
        return f.read(st.st_size)
