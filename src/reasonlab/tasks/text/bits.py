"""The FPT bit tasks as questions for a generative model.

Bit XOR, the paper's definition (Lu et al. 2021, "Evaluation tasks - 2. Bit XOR"): "Input:
concatenation of 2 bitstrings of length 5. Output: a bitstring of length 5 which is the XOR of
the 2 input bitstrings". Bit memory ("Evaluation tasks - 1. Bit memory"): "Input: concatenation
of 5 bitstrings of length 1000 [...]; a 6th bitstring which is created by taking a random one of
the previous 5 and randomly masking 50% of the bits. Output: recreation of the masked
bitstring".

The strings are the tasks' readable forms (`0`/`1`; memory: `+`/`-` with `?` masked, patches
separated by spaces); the answer is one string without spaces.
"""

from __future__ import annotations

from reasonlab.tasks.base import Batch
from reasonlab.tasks.bits import BitMemoryTask, BitXorTask
from reasonlab.tasks.text.base import TEXT_VIEWS, TextItem


@TEXT_VIEWS.register("bit_xor")
def xor_item(task: BitXorTask, batch: Batch, i: int, index: int) -> TextItem:
    answer = "".join(str(int(y)) for y in batch.labels[i].tolist())
    prompt = ("Give the bitwise XOR of the two bit strings, as one string of 0s and 1s.\n"
              f"Strings: {task.render(batch, i)}\nAnswer:")
    return TextItem(prompt, answer)


@TEXT_VIEWS.register("bit_memory")
def memory_item(task: BitMemoryTask, batch: Batch, i: int, index: int) -> TextItem:
    answer = "".join("+" if y else "-" for y in batch.labels[i].tolist())
    prompt = ("Patterns 1 to {k} are strings of + and -; Q is one of them with some places "
              "masked as ?. Write out in full, without spaces, the pattern Q was taken from.\n"
              "{text}\nAnswer:").format(k=task.config.n_patterns, text=task.render(batch, i))
    return TextItem(prompt, answer, {"masked_bits": int(batch.meta["masked"][i].sum())})
