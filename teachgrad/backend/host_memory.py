"""Keep freed host memory for reuse, instead of returning it to the OS each step.

A backward pass allocates and frees the same large arrays every step. glibc's
malloc adapts its thresholds as it goes, but it often lands just short: at the
end of each step it hands a few MB back to the kernel (``brk`` down), and the
next step takes them back page by page, paying a page fault for every 4 KiB.
Measured here on an MLP gradient, that doubled the time of the matmuls that
write fresh gradient arrays.

``keep_freed_memory()`` starts glibc where its own adaptation would end: arrays
up to 32 MiB come from the heap, and up to 64 MiB of free heap is kept for
reuse (the same idea as the caching allocators of GPU frameworks). It changes
malloc for the whole process, so it is opt-in: call
``tg.backend.keep_freed_memory()`` in a training script, or set the environment
variable ``TEACHGRAD_KEEP_FREED_MEMORY=1`` before importing teachgrad (the
benchmarks do). Importing teachgrad alone leaves malloc as it is.
"""
import ctypes
import platform

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 * 2**20      # glibc's largest automatic value on 64-bit
TRIM_THRESHOLD = 2 * MMAP_THRESHOLD

#: Whether keep_freed_memory() changed malloc's settings in this process.
active = False


def keep_freed_memory():
    """Set glibc's mmap and trim thresholds, for the whole process (no-op elsewhere).
    Returns whether they are set."""
    global active
    if active:
        return active
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
        active = bool(libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
                      and libc.mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
    except (OSError, AttributeError):
        active = False
    return active
