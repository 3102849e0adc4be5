import re

from hiplint import CudaRule, Impact, Severity
from hiplint.cparse import iter_nodes
from .._cuda import call_name, device_function
from hiplint.lazy import lazy_re

# Read-modify-write atomics that take a lock: atomicCAS(p, FREE, TAKEN), atomicExch(p, TAKEN).
LOCK_ATOMICS = frozenset({
    "atomicCAS", "atomicCAS_block", "atomicCAS_system", "atomicExch", "atomicExch_block",
    "atomicExch_system",
})
# A single lane per warp (or per block) runs the loop: `if (threadIdx.x == 0)`, `if (lane == 0)`.
ELECTED = lazy_re(r"^\s*\(?\s*(threadIdx\.[xyz]|lane(_?id|_?idx)?|laneId|laneIdx|tid|thread_?id|ltid|"
                     r"thread_rank\s*\(\s*\)|\w+\.thread_rank\s*\(\s*\)|__lane_id\s*\(\s*\)|"
                     r"threadIdx\.x\s*%\s*\w+|threadIdx\.x\s*&\s*\w+)\s*\)?\s*==\s*0\s*\)?\s*$")
# What an empty wait loop may call: sleeps and fences.
WAIT_CALLS = frozenset({"__nanosleep", "__threadfence", "__threadfence_block", "__builtin_amdgcn_s_sleep",
                        "__syncwarp"})
STORE_ATOMICS = frozenset({"atomicExch", "atomicAdd", "atomicOr", "atomicInc", "atomicCAS", "atomicExch_block",
                           "atomicAdd_block", "atomicSub", "atomicMax"})
CONSTANT = lazy_re(r"^\(?\s*(-?\d+[uUlL]*|true|false|[A-Z][A-Z0-9_]*)\s*\)?$")


class IntraWarpSpinLock(CudaRule):
    """Spin locks in device code: a loop that waits on `atomicCAS`/`atomicExch` taking a lock.

    ## What it does
    Finds `while`, `do ... while` and `for` loops in `__global__` and `__device__` functions
    whose condition acquires a lock with a read-modify-write atomic on constant values:
    `while (atomicCAS(&m, 0, 1) != 0);`, `while (atomicExch(&m, 1) == 1) {}`, or
    `do { old = atomicCAS(&m, 0, 1); } while (old != 0);`; and empty busy-wait loops on a
    `__shared__` flag that another thread stores to in the other arm of an `if` or later in the
    function (`if (tid == 0) flag = 1; else while (flag == 0) {}`). Loops that only one lane runs
    (inside `if (threadIdx.x == 0)`, `if (lane == 0)`) and lock-free CAS loops (the expected and
    new values are variables, as in a floating-point `atomicAdd` emulation) are not reported, nor
    `atomicCAS(p, 0, 0)` polling (equal expected and new values swap nothing: an atomic read).

    ## Why it breaks on AMD
    All lanes of a wave share one program counter. When several lanes of a wave spin on the same
    lock, the lane that won it waits (masked off) for the losers to leave the loop, and the losers
    wait for the winner to release the lock after the loop: the wave hangs. CUDA allows this since
    Volta because of independent thread scheduling; HIP's documentation says "HIP does not support
    this type of scheduling". It hangs on wave64 (gfx90a, gfx942, gfx950) and wave32 (gfx1100)
    alike, on every ROCm version. A `__device__` lock helper is reported because it hangs as soon
    as two lanes of one wave call it.

    ## Example
    ```cuda
    __device__ int mutex;
    __global__ void add_locked(float* total, const float* x) {
        while (atomicCAS(&mutex, 0, 1) != 0) {}
        *total += x[threadIdx.x];
        atomicExch(&mutex, 0);
    }
    ```

    ## Use instead
    ```cuda
    __device__ int mutex;
    __global__ void add_locked(float* total, const float* x) {
        if (threadIdx.x == 0) {                    // one lane per block takes the lock
            while (atomicCAS(&mutex, 0, 1) != 0) {}
            *total += x[0];
            atomicExch(&mutex, 0);
        }
    }
    ```
    Better: aggregate per warp and use `atomicAdd`, or put the critical section inside the loop
    (`if (atomicCAS(&m, 0, 1) == 0) { ...; atomicExch(&m, 0); done = true; }`).

    ## References
    - HIP kernel language, "Independent thread scheduling": https://rocm.docs.amd.com/projects/HIP/en/latest/reference/kernel_language.html
    - CUDA C++ Programming Guide, "Independent Thread Scheduling" (compute capability 7.x): https://docs.nvidia.com/cuda/cuda-c-programming-guide/
    """

    code = "SYN001"
    name = "intra-warp-spin-lock"
    summary = "spin lock in device code: lanes of one AMD wave spinning on the same lock hang (no independent thread scheduling)"
    severity = Severity.ERROR
    impact = Impact.HANG
    checklist = "Take device locks from one elected lane per wave (or block), or move the critical section inside the acquiring loop, or go lock-free."
    # A lock needs one of the LOCK_ATOMICS (all start atomicCAS or atomicExch); a flag wait a __shared__ flag.
    triggers = ("atomicCAS", "atomicExch", "__shared__")
    query = """
    (while_statement condition: (_) @cond) @loop
    (do_statement condition: (_) @cond) @loop
    (for_statement condition: (_) @cond) @loop
    """

    def check(self, ctx, captures):
        loop = captures["loop"][0]
        cond = captures["cond"][0]
        text = ctx.unit.data[loop.start_byte:loop.end_byte]
        if b"atomicCAS" not in text and b"atomicExch" not in text and not self._waits_only(ctx, loop):
            return  # neither a lock (LOCK_ATOMICS) nor an otherwise empty wait loop: most loops of a kernel
        if device_function(ctx, loop) is None and not ctx.unit.is_macro:
            return
        acquire = self._lock_atomic(ctx, cond)
        if acquire is None and loop.type == "do_statement":
            acquire = self._lock_assigned_in_body(ctx, loop, cond)
        if acquire is None:
            flag = self._shared_flag_wait(ctx, loop, cond)
            if flag and not self._elected(ctx, loop):
                ctx.report(loop.child(0), f"busy-wait on the shared-memory flag `{flag}` set by another thread of "
                                          f"the block: if that thread is in the same AMD wave, the wave never "
                                          f"reaches the store (no independent thread scheduling) and hangs")
            return
        if self._elected(ctx, loop):
            return
        ctx.report(loop.child(0) if loop.type != "do_statement" else loop.child(0),
                   f"spin lock `{ctx.text(acquire)}`: lanes of one AMD wave that contend for it hang "
                   f"(HIP has no independent thread scheduling); elect one lane or restructure")

    def _lock_atomic(self, ctx, node):
        for call in iter_nodes(node, {"call_expression"}):
            if self._is_lock_call(ctx, call):
                return call
        return None

    def _is_lock_call(self, ctx, call) -> bool:
        name = call_name(ctx, call)
        if name not in LOCK_ATOMICS:
            return False
        args = call.child_by_field_name("arguments")
        values = [a for a in (args.named_children if args is not None else []) if a.type != "comment"]
        if name.startswith("atomicCAS"):
            # atomicCAS(p, 0, 0) swaps nothing: an atomic read polling a flag, no lock taken.
            return len(values) == 3 and all(CONSTANT.match(ctx.text(v)) for v in values[1:]) \
                and ctx.text(values[1]).strip() != ctx.text(values[2]).strip()
        return len(values) == 2 and CONSTANT.match(ctx.text(values[1])) is not None

    def _lock_assigned_in_body(self, ctx, loop, cond):
        names = {ctx.text(i) for i in iter_nodes(cond, {"identifier"})}
        body = loop.child_by_field_name("body")
        if body is None or not names:
            return None
        for node in iter_nodes(body, {"assignment_expression", "init_declarator"}):
            left = node.child_by_field_name("left" if node.type == "assignment_expression" else "declarator")
            right = node.child_by_field_name("right" if node.type == "assignment_expression" else "value")
            if left is None or right is None or ctx.text(left) not in names:
                continue
            if right.type == "call_expression" and self._is_lock_call(ctx, right):
                return right
        return None

    @staticmethod
    def _waits_only(ctx, loop) -> bool:
        """The loop body is empty or only sleeps and fences (WAIT_CALLS)."""
        body = loop.child_by_field_name("body")
        if body is None:
            return False
        stmts = [c for c in body.named_children if c.type != "comment"] if body.type == "compound_statement" else [body]
        for st in stmts:
            if st.type != "expression_statement":
                return False
            text = ctx.text(st)
            if "(" not in text and text.strip() != ";":
                return False  # no call: an assignment or an expression
            calls = [call_name(ctx, c) for c in iter_nodes(st, {"call_expression"})]
            if (ctx.text(st).strip() != ";" and not calls) or any(c not in WAIT_CALLS for c in calls):
                return False
        return True

    @staticmethod
    def _shared_flag_wait(ctx, loop, cond) -> str:
        """The `__shared__` variable an otherwise empty loop waits on, if the function also stores to it."""
        fn = ctx.enclosing(loop, ("function_definition",))
        if fn is None or not IntraWarpSpinLock._waits_only(ctx, loop):
            return ""
        shared = set()
        for decl in iter_nodes(fn, {"declaration"}):
            if any(c.type == "type_qualifier" and ctx.text(c) == "__shared__" for c in decl.children):
                for d in decl.children_by_field_name("declarator"):
                    ident = d
                    while ident is not None and ident.type != "identifier":
                        ident = ident.child_by_field_name("declarator")
                    if ident is not None:
                        shared.add(ctx.text(ident))
        waited = [ctx.text(i) for i in iter_nodes(cond, {"identifier"}) if ctx.text(i) in shared]
        if not waited:
            return ""
        name = waited[0]
        for node in iter_nodes(fn, {"assignment_expression", "call_expression"}):
            if loop.start_byte <= node.start_byte < loop.end_byte:
                continue
            if node.type == "assignment_expression":
                target = node.child_by_field_name("left")
            else:
                if call_name(ctx, node) not in STORE_ATOMICS:
                    continue
                args = node.child_by_field_name("arguments")
                target = args.named_children[0] if args is not None and args.named_children else None
            if target is not None and name in {ctx.text(i) for i in iter_nodes(target, {"identifier"})} \
                    and IntraWarpSpinLock._diverged(node, loop):
                return name
        return ""

    @staticmethod
    def _diverged(store, loop) -> bool:
        """Can a wave spin in `loop` before its own lanes run `store`? Yes when the store comes later in
        program order, or sits in the other arm of an `if` than the loop. A store that every lane passes
        before the loop (all arrive, then all wait) cannot hang a wave."""
        if store.start_byte > loop.end_byte:
            return True
        ancestors = set()
        n = store.parent
        while n is not None:
            ancestors.add(n.id)
            n = n.parent
        n = loop.parent
        while n is not None and n.id not in ancestors:
            n = n.parent
        if n is None or n.type != "if_statement":
            return False
        cons = n.child_by_field_name("consequence")
        if cons is None:
            return False
        in_cons = lambda x: cons.start_byte <= x.start_byte < cons.end_byte
        return in_cons(store) != in_cons(loop)

    @staticmethod
    def _elected(ctx, loop) -> bool:
        n = loop.parent
        while n is not None and n.type not in ("function_definition", "lambda_expression"):
            if n.type == "if_statement":
                cond = n.child_by_field_name("condition")
                cons = n.child_by_field_name("consequence")
                text = ctx.text(cond).strip()
                if text.startswith("(") and text.endswith(")"):
                    text = text[1:-1]
                if cons is not None and cons.start_byte <= loop.start_byte < cons.end_byte and ELECTED.match(text):
                    return True
            n = n.parent
        return False
