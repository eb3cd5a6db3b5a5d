/*
 * gaps._speedups: the compiled core of gaps.frontier's best-first search.
 *
 * best_first(start, budget, defer, narrow, bound, wins_only) runs exactly the search of
 * gaps.frontier's pure-Python best_first: the same tiers, the same promise, the same
 * bucket queue (newest first among equals), the same move order, the same bound, the same
 * node counting and the same budget checks (the Python Budget's check() is called every
 * CHECK_EVERY nodes, so an injected clock works).
 * Given the same start it expands the same positions in the same order and returns the
 * same answer; tests/test_speedups.py holds it to that. The rules it relies on are proven
 * in docs/solver.md. upper_bound(key) is gaps.bound.upper_bound, which the search prunes
 * with.
 *
 * Memory: a stored position is its canonical key (rows sorted) packed at 6 bits a cell
 * (39 bytes), its upper bound (1 byte, read again when it leaves the frontier) and the
 * index of the position it was reached from, 44 bytes in an arena of
 * fixed chunks; the hash table holds 4-byte indexes at a load of at most 5/8; the
 * frontier holds 4-byte indexes. About 55-60 bytes a position in all, counted exactly
 * into budget.table_bytes.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define COLUMNS 13
#define CELLS 52
#define GAP_BYTE 255
#define ALL_PLACED 48
#define CHECK_EVERY 1024
#define LOWEST 8
#define BUCKETS (4 * 48 + 44 + LOWEST + 1)
#define FORCED 0
#define ORDINARY 1
#define POOR 2
#define NO_PARENT UINT32_MAX

#define PACKED 40 /* a key packed at 6 bits a cell (52 for a gap): 312 bits, then its bound */
#define KEY_BYTES 39 /* the key's bytes: what is hashed and compared */
#define BOUND_AT 39 /* the byte after them: the position's upper bound (rule 8) */
#define STRIDE 44 /* packed key + parent index */
#define CHUNK_BITS 12 /* the arena grows by chunks of 4,096 positions, never copied */
#define CHUNK (1u << CHUNK_BITS)
/* A hash slot holds index + 1 in its low INDEX_BITS and a tag of the key's hash above them,
 * so that most probes past another key need not read that key (a cache miss) */
#define INDEX_BITS 27
#define INDEX_MASK ((1u << INDEX_BITS) - 1)
#define TAG_OF(hash) ((uint32_t)((hash) >> (64 - (32 - INDEX_BITS))) << INDEX_BITS)

/* When the stored positions reach this share of the memory budget, the search narrows */
#define NARROW_AT 0.7
/* ... to about this share of them: the most promising waiting positions and their lines */
#define NARROW_TO 0.5

static const uint8_t TWOS[4] = {1, 14, 27, 40};

static inline int is_dead(uint8_t code) { return code == GAP_BYTE || code % 13 == 12; }

typedef struct {
    uint32_t *items;
    size_t size, capacity;
} Stack;

typedef struct {
    uint8_t **chunks; /* STRIDE bytes per stored position, CHUNK positions a chunk */
    size_t count, capacity, chunk_count;
    uint32_t *slots;  /* index + 1 of a stored position, 0 for an empty slot */
    size_t slot_mask;
    Stack frontier[3][BUCKETS];
    size_t frontier_bytes;
} Search;

static inline uint8_t *entry_at(const Search *s, uint32_t index)
{
    return s->chunks[index >> CHUNK_BITS] + (size_t)(index & (CHUNK - 1)) * STRIDE;
}

static inline uint32_t parent_of(const Search *s, uint32_t index)
{
    uint32_t parent;
    memcpy(&parent, entry_at(s, index) + PACKED, 4);
    return parent;
}

static inline void pack(const uint8_t *key, uint8_t *packed)
{
    uint64_t words[5] = {0, 0, 0, 0, 0};
    for (int cell = 0; cell < CELLS; cell++) {
        uint64_t value = key[cell] == GAP_BYTE ? CELLS : key[cell];
        int bit = 6 * cell, word = bit >> 6, shift = bit & 63;
        words[word] |= value << shift;
        if (shift > 58)
            words[word + 1] |= value >> (64 - shift);
    }
    memcpy(packed, words, PACKED);
}

static inline void unpack(const uint8_t *packed, uint8_t *key)
{
    uint64_t words[5];
    memcpy(words, packed, PACKED);
    for (int cell = 0; cell < CELLS; cell++) {
        int bit = 6 * cell, word = bit >> 6, shift = bit & 63;
        uint64_t value = words[word] >> shift;
        if (shift > 58)
            value |= words[word + 1] << (64 - shift);
        value &= 63;
        key[cell] = value == CELLS ? GAP_BYTE : (uint8_t)value;
    }
}

static inline uint64_t hash_packed(const uint8_t *packed)
{
    uint8_t key[PACKED];
    memcpy(key, packed, KEY_BYTES);
    memset(key + KEY_BYTES, 0, PACKED - KEY_BYTES); /* the bound's byte is not the key's */
    uint64_t h = 0x9E3779B97F4A7C15ULL, word;
    for (int i = 0; i < PACKED; i += 8) {
        memcpy(&word, key + i, 8);
        h = (h ^ word) * 0xBF58476D1CE4E5B9ULL;
        h ^= h >> 31;
    }
    h *= 0x94D049BB133111EBULL;
    return h ^ (h >> 29);
}

static int stack_push(Search *s, Stack *stack, uint32_t value)
{
    if (stack->size == stack->capacity) {
        size_t capacity = stack->capacity ? stack->capacity * 2 : 16;
        uint32_t *items = PyMem_Realloc(stack->items, capacity * sizeof(uint32_t));
        if (items == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        s->frontier_bytes += (capacity - stack->capacity) * sizeof(uint32_t);
        stack->items = items;
        stack->capacity = capacity;
    }
    stack->items[stack->size++] = value;
    return 0;
}

/* A hash table of size slots (a power of 2) for the stored positions. */
static int resize_slots(Search *s, size_t size)
{
    /* The table is rebuilt from the arena, so the old one goes first: the two never
     * take memory together (a search that cannot get the new one fails anyway). */
    PyMem_Free(s->slots);
    s->slots = NULL;
    s->slot_mask = 0;
    uint32_t *slots = PyMem_Calloc(size, sizeof(uint32_t));
    if (slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    size_t mask = size - 1;
    for (size_t index = 0; index < s->count; index++) {
        uint64_t hash = hash_packed(entry_at(s, (uint32_t)index));
        size_t slot = hash & mask;
        while (slots[slot])
            slot = (slot + 1) & mask;
        slots[slot] = ((uint32_t)index + 1) | TAG_OF(hash);
    }
    s->slots = slots;
    s->slot_mask = mask;
    return 0;
}

static int grow_slots(Search *s)
{
    return resize_slots(s, s->slot_mask ? (s->slot_mask + 1) * 2 : 1 << 12);
}

/* Finds a packed key with its hash: 1 if stored, 0 if not; *slot_out is its slot or the
 * empty slot where it would go. Makes room first, so that the slot stays valid for
 * insert(): -1 on error. */
static int lookup(Search *s, const uint8_t *packed, uint64_t hash, size_t *slot_out)
{
    /* a load of at most 5/8 keeps linear probing short */
    if ((s->count + 1) * 8 > (s->slot_mask + 1) * 5 && grow_slots(s) < 0)
        return -1;
    uint32_t tag = TAG_OF(hash);
    size_t slot = hash & s->slot_mask;
    uint32_t found;
    while ((found = s->slots[slot]) != 0) {
        if ((found & ~INDEX_MASK) == tag
            && memcmp(entry_at(s, (found & INDEX_MASK) - 1), packed, KEY_BYTES) == 0) {
            *slot_out = slot;
            return 1;
        }
        slot = (slot + 1) & s->slot_mask;
    }
    *slot_out = slot;
    return 0;
}

/* Stores a packed key with its hash (reached from parent) in the empty slot lookup()
 * found for it: 0, or -1 on error. */
static int insert(Search *s, const uint8_t *packed, uint64_t hash, size_t slot, uint32_t parent)
{
    if (s->count == s->capacity) {
        if (s->chunk_count == ((size_t)1 << (INDEX_BITS - CHUNK_BITS)) - 1) {
            PyErr_SetString(PyExc_MemoryError, "more positions than a search can index");
            return -1;
        }
        uint8_t **chunks = PyMem_Realloc(s->chunks, (s->chunk_count + 1) * sizeof(uint8_t *));
        if (chunks == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        s->chunks = chunks;
        if ((chunks[s->chunk_count] = PyMem_Malloc((size_t)CHUNK * STRIDE)) == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        s->chunk_count++;
        s->capacity += CHUNK;
    }
    uint32_t index = (uint32_t)s->count++;
    uint8_t *entry = entry_at(s, index);
    memcpy(entry, packed, PACKED);
    memcpy(entry + PACKED, &parent, 4);
    s->slots[slot] = (index + 1) | TAG_OF(hash);
    return 0;
}

/* Stores a packed key with its hash (reached from parent) unless already stored: 1 if new,
 * 0 if seen, -1 on error. */
static int store(Search *s, const uint8_t *packed, uint64_t hash, uint32_t parent)
{
    size_t slot;
    int found = lookup(s, packed, hash, &slot);
    if (found != 0)
        return found < 0 ? -1 : 0;
    return insert(s, packed, hash, slot, parent) < 0 ? -1 : 1;
}

static size_t search_bytes(const Search *s)
{
    return s->capacity * STRIDE + (s->slot_mask + 1) * sizeof(uint32_t) + s->frontier_bytes;
}

static void search_free(Search *s)
{
    for (size_t chunk = 0; chunk < s->chunk_count; chunk++)
        PyMem_Free(s->chunks[chunk]);
    PyMem_Free(s->chunks);
    PyMem_Free(s->slots);
    for (int tier = 0; tier < 3; tier++)
        for (int bucket = 0; bucket < BUCKETS; bucket++)
            PyMem_Free(s->frontier[tier][bucket].items);
}

/* (placed, promise) of one row, as gaps.frontier._row_value. */
static inline void row_value(const uint8_t *row, int *placed_out, int *promise_out)
{
    int placed = 0;
    uint8_t first = row[0];
    if (first != GAP_BYTE && first % 13 == 1) {
        placed = 1;
        while (placed < COLUMNS - 1 && row[placed] == row[placed - 1] + 1)
            placed++;
    }
    int pairs = 0, dead = 0;
    uint8_t previous = first;
    for (int column = 1; column < COLUMNS; column++) {
        uint8_t here = row[column];
        if (here == (uint8_t)(previous + 1) && previous != GAP_BYTE)
            pairs++;
        else if (here == GAP_BYTE && is_dead(previous))
            dead++;
        previous = here;
    }
    *placed_out = placed;
    *promise_out = 4 * placed + pairs - 2 * dead;
}

static inline void key_value(const uint8_t *key, int *placed_rows, int *placed, int *promise)
{
    *placed = *promise = 0;
    for (int row = 0; row < 4; row++) {
        int row_placed, row_promise;
        row_value(key + row * COLUMNS, &row_placed, &row_promise);
        if (placed_rows)
            placed_rows[row] = row_placed;
        *placed += row_placed;
        *promise += row_promise;
    }
}

/* The four rows of cells, sorted as byte strings, into key. */
static inline void canonical(const uint8_t *cells, uint8_t *key)
{
    const uint8_t *rows[4] = {cells, cells + 13, cells + 26, cells + 39};
    for (int i = 1; i < 4; i++) {
        const uint8_t *row = rows[i];
        int j = i;
        while (j > 0 && memcmp(rows[j - 1], row, COLUMNS) > 0) {
            rows[j] = rows[j - 1];
            j--;
        }
        rows[j] = row;
    }
    for (int i = 0; i < 4; i++)
        memcpy(key + i * COLUMNS, rows[i], COLUMNS);
}

typedef struct {
    uint8_t code, row, column;
} Move;

typedef struct {
    Move moves[3][16];
    int count[3];
} Tiers;

/* The legal moves of key by tier, as gaps.frontier._tiers. */
static void tiers_of(const uint8_t *key, const int *placed_rows, const uint8_t *where, Tiers *tiers)
{
    tiers->count[0] = tiers->count[1] = tiers->count[2] = 0;
    for (int gap = 0; gap < CELLS; gap++) {
        if (key[gap] != GAP_BYTE)
            continue;
        int row = gap / COLUMNS, column = gap % COLUMNS;
        if (column == 0) {
            for (int i = 0; i < 4; i++) {
                int tier = where[TWOS[i]] % COLUMNS == 0 ? POOR : ORDINARY;
                tiers->moves[tier][tiers->count[tier]++] = (Move){TWOS[i], (uint8_t)row, 0};
            }
            continue;
        }
        uint8_t left = key[gap - 1];
        if (is_dead(left))
            continue;
        uint8_t code = left + 1;
        int tier;
        if (placed_rows[row] == column) {
            tier = FORCED;
        } else {
            int at = where[code];
            tier = at % COLUMNS && is_dead(key[at - 1]) ? POOR : ORDINARY;
        }
        tiers->moves[tier][tiers->count[tier]++] = (Move){code, (uint8_t)row, (uint8_t)column};
    }
}

/* The cells of column 1, and of every other column, as 52-bit masks. */
#define COLUMN_ONE 0x8004002001ULL
#define ALL_CELLS ((1ULL << CELLS) - 1)
#define NOT_COLUMN_ONE (ALL_CELLS & ~COLUMN_ONE)

static const uint8_t PERMUTATIONS[24][4] = {
    {0, 1, 2, 3}, {0, 1, 3, 2}, {0, 2, 1, 3}, {0, 2, 3, 1}, {0, 3, 1, 2}, {0, 3, 2, 1},
    {1, 0, 2, 3}, {1, 0, 3, 2}, {1, 2, 0, 3}, {1, 2, 3, 0}, {1, 3, 0, 2}, {1, 3, 2, 0},
    {2, 0, 1, 3}, {2, 0, 3, 1}, {2, 1, 0, 3}, {2, 1, 3, 0}, {2, 3, 0, 1}, {2, 3, 1, 0},
    {3, 0, 1, 2}, {3, 0, 2, 1}, {3, 1, 0, 2}, {3, 1, 2, 0}, {3, 2, 0, 1}, {3, 2, 1, 0},
};

/* An upper bound on the cards placed in any position reachable from cells, as
 * gaps.bound.upper_bound (docs/solver.md, rule 8): the cells that can be emptied, a least
 * fixpoint, limit the sequence each row can hold. */
static int upper_bound(const uint8_t *cells)
{
    uint8_t where[CELLS];
    uint64_t gaps = 0;
    for (int cell = 0; cell < CELLS; cell++) {
        if (cells[cell] == GAP_BYTE)
            gaps |= 1ULL << cell;
        else
            where[cells[cell]] = (uint8_t)cell;
    }
    /* from below: the cards with a legal move now are in the fixpoint */
    uint64_t moving = 0;
    for (int cell = 0; cell < CELLS; cell++) {
        if (cells[cell] != GAP_BYTE)
            continue;
        if (cell % COLUMNS == 0) {
            for (int i = 0; i < 4; i++)
                moving |= 1ULL << where[TWOS[i]];
        } else if (!is_dead(cells[cell - 1])) {
            moving |= 1ULL << where[cells[cell - 1] + 1];
        }
    }
    for (;;) {
        /* a card found to move empties its cell for the cards after it in the same pass;
         * a pass that finds nothing new saw the final cells, so it is the fixpoint */
        uint64_t before = moving;
        for (int suit = 0; suit < 4; suit++) {
            int code = suit * 13 + 1;
            uint64_t here = 1ULL << where[code];
            uint64_t reached = here | (COLUMN_ONE & (gaps | moving));
            if (reached != here)
                moving |= here;
            for (code++; code < suit * 13 + 13; code++) {
                here = 1ULL << where[code];
                reached = here | ((reached << 1) & NOT_COLUMN_ONE & (gaps | moving));
                if (reached != here)
                    moving |= here;
            }
        }
        if (moving == before)
            break;
    }
    /* a row holds suit s up to rank k + 1 only if each cell before can be emptied or
     * holds the card of s that belongs there */
    uint64_t emptied = gaps | moving;
    int run[4][4];
    for (int row = 0; row < 4; row++)
        for (int suit = 0; suit < 4; suit++) {
            int length = 0, start = row * COLUMNS;
            while (length < COLUMNS - 1
                   && ((emptied >> (start + length) & 1)
                       || where[suit * 13 + 1 + length] == start + length))
                length++;
            run[row][suit] = length;
        }
    int most = 0;
    for (int p = 0; p < 24; p++) {
        int sum = run[0][PERMUTATIONS[p][0]] + run[1][PERMUTATIONS[p][1]]
                  + run[2][PERMUTATIONS[p][2]] + run[3][PERMUTATIONS[p][3]];
        if (sum > most)
            most = sum;
    }
    return most;
}

/* Sets object.name to value: 0, or -1 with an exception set. */
static int set_long_long(PyObject *object, const char *name, long long value)
{
    PyObject *number = PyLong_FromLongLong(value);
    if (number == NULL)
        return -1;
    int failed = PyObject_SetAttrString(object, name, number);
    Py_DECREF(number);
    return failed;
}

/* Sets budget.exhausted to name: 0, or -1 with an exception set. */
static int set_exhausted(PyObject *budget, const char *name)
{
    PyObject *text = PyUnicode_FromString(name);
    if (text == NULL)
        return -1;
    int failed = PyObject_SetAttrString(budget, "exhausted", text);
    Py_DECREF(text);
    return failed;
}

/* Sets budget.nodes and budget.table_bytes, then returns budget.check(): 1, 0, or -1. */
static int check_budget(PyObject *budget, long long nodes, long long table_bytes)
{
    if (set_long_long(budget, "nodes", nodes) < 0
        || set_long_long(budget, "table_bytes", table_bytes) < 0)
        return -1;
    PyObject *result = PyObject_CallMethod(budget, "check", NULL);
    if (result == NULL)
        return -1;
    int going = PyObject_IsTrue(result);
    Py_DECREF(result);
    return going;
}

static int get_long_long(PyObject *object, const char *name, long long *out)
{
    PyObject *value = PyObject_GetAttrString(object, name);
    if (value == NULL)
        return -1;
    *out = PyLong_AsLongLong(value);
    Py_DECREF(value);
    return (*out == -1 && PyErr_Occurred()) ? -1 : 0;
}

/* What a search reads of budget: max_nodes, nodes, table_bytes and max_memory_mb (in
 * bytes): 0, or -1 with an exception set. */
static int read_budget(PyObject *budget, long long *max_nodes, long long *nodes,
                       long long *table_bytes, double *memory_limit)
{
    if (get_long_long(budget, "max_nodes", max_nodes) < 0
        || get_long_long(budget, "nodes", nodes) < 0
        || get_long_long(budget, "table_bytes", table_bytes) < 0)
        return -1;
    PyObject *memory_mb = PyObject_GetAttrString(budget, "max_memory_mb");
    if (memory_mb == NULL)
        return -1;
    double limit = PyFloat_AsDouble(memory_mb);
    Py_DECREF(memory_mb);
    if (limit == -1.0 && PyErr_Occurred())
        return -1;
    *memory_limit = limit * 1e6;
    return 0;
}

/* Keeps the most promising waiting positions (in the order they would be expanded) with
 * every position on their lines, and the best position's line, about NARROW_TO of all
 * stored; forgets the rest. Indexes are renumbered in order (a parent keeps a lower index
 * than its children). Returns 0, or -1 with an exception set. */
static int narrow_search(Search *s, long long *waiting, int *top, uint32_t *best_index)
{
    size_t count = s->count, kept = 0, target = (size_t)(NARROW_TO * (double)count);
    uint32_t *renumbered = PyMem_Malloc(count * sizeof(uint32_t));
    if (renumbered == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    const uint32_t unkept = UINT32_MAX;
    for (size_t index = 0; index < count; index++)
        renumbered[index] = unkept;
    /* marks index and its line; counts what it newly keeps */
#define KEEP(start)                                                                      \
    for (uint32_t at = (start); at != NO_PARENT && renumbered[at] == unkept;             \
         at = parent_of(s, at)) {                                                        \
        renumbered[at] = 0;                                                              \
        kept++;                                                                          \
    }
    KEEP(*best_index);
    for (int tier = 0; tier < 3 && kept < target; tier++)
        for (int bucket = top[tier]; bucket >= 0 && kept < target; bucket--) {
            Stack *stack = &s->frontier[tier][bucket];
            for (size_t i = stack->size; i > 0 && kept < target; i--)
                KEEP(stack->items[i - 1]);
        }
#undef KEEP
    /* the frontier keeps its kept entries, in their order */
    for (int tier = 0; tier < 3; tier++) {
        waiting[tier] = 0;
        for (int bucket = 0; bucket < BUCKETS; bucket++) {
            Stack *stack = &s->frontier[tier][bucket];
            size_t size = 0;
            for (size_t i = 0; i < stack->size; i++)
                if (renumbered[stack->items[i]] != unkept)
                    stack->items[size++] = stack->items[i];
            stack->size = size;
            waiting[tier] += (long long)size;
        }
    }
    /* entries move down in order; a parent is renumbered before its children */
    uint32_t next = 0;
    for (size_t index = 0; index < count; index++) {
        if (renumbered[index] == unkept)
            continue;
        uint32_t parent = parent_of(s, (uint32_t)index);
        if (parent != NO_PARENT)
            parent = renumbered[parent];
        uint8_t *entry = entry_at(s, next);
        memmove(entry, entry_at(s, (uint32_t)index), PACKED);
        memcpy(entry + PACKED, &parent, 4);
        renumbered[index] = next++;
    }
    for (int tier = 0; tier < 3; tier++)
        for (int bucket = 0; bucket < BUCKETS; bucket++) {
            Stack *stack = &s->frontier[tier][bucket];
            for (size_t i = 0; i < stack->size; i++)
                stack->items[i] = renumbered[stack->items[i]];
        }
    *best_index = renumbered[*best_index];
    PyMem_Free(renumbered);
    s->count = next;
    size_t chunks = (next + CHUNK - 1) / CHUNK;
    if (chunks == 0)
        chunks = 1;
    for (size_t chunk = chunks; chunk < s->chunk_count; chunk++)
        PyMem_Free(s->chunks[chunk]);
    s->chunk_count = chunks;
    s->capacity = chunks * CHUNK;
    size_t size = 1 << 12;
    while ((s->count + 1) * 8 > size * 5)
        size *= 2;
    return resize_slots(s, size);
}

/* The stored keys from the search's start to the position at index, as a list of bytes;
 * NULL with an exception set. */
static PyObject *chain_to(const Search *s, uint32_t last)
{
    Py_ssize_t length = 0;
    for (uint32_t index = last; index != NO_PARENT; index = parent_of(s, index))
        length++;
    PyObject *chain = PyList_New(length);
    if (chain == NULL)
        return NULL;
    uint8_t cells[CELLS];
    for (uint32_t index = last; index != NO_PARENT; index = parent_of(s, index)) {
        unpack(entry_at(s, index), cells);
        PyObject *key = PyBytes_FromStringAndSize((const char *)cells, CELLS);
        if (key == NULL) {
            Py_DECREF(chain);
            return NULL;
        }
        PyList_SET_ITEM(chain, --length, key);
    }
    return chain;
}

/* 0 if key is a position (every index below trusts it: 48 cards, no Ace, once each, and
 * 4 gaps), else -1 with ValueError set. */
static int check_key(const uint8_t *key, Py_ssize_t size)
{
    if (size != CELLS) {
        PyErr_Format(PyExc_ValueError, "a key is %d bytes, not %zd", CELLS, size);
        return -1;
    }
    int seen[CELLS] = {0}, gaps = 0;
    for (int cell = 0; cell < CELLS; cell++) {
        uint8_t code = key[cell];
        if (code == GAP_BYTE)
            gaps++;
        else if (code >= CELLS || code % 13 == 0 || seen[code]++) {
            PyErr_Format(PyExc_ValueError,
                         "a key holds 48 cards once each and 4 gaps: byte %d at cell %d",
                         code, cell);
            return -1;
        }
    }
    if (gaps != 4) {
        PyErr_Format(PyExc_ValueError, "a key holds 4 gaps, not %d", gaps);
        return -1;
    }
    return 0;
}

PyDoc_STRVAR(upper_bound_doc,
"upper_bound(key, /)\n--\n\n"
"What gaps.bound.upper_bound(key) computes, for a key of 52 bytes (a card code or 255\n"
"for a gap a cell).");

/* measure(key) of the one key in args (format names the function for its errors). */
static PyObject *of_one_key(PyObject *args, const char *format, int (*measure)(const uint8_t *))
{
    const uint8_t *key;
    Py_ssize_t size;
    if (!PyArg_ParseTuple(args, format, &key, &size) || check_key(key, size) < 0)
        return NULL;
    return PyLong_FromLong(measure(key));
}

static PyObject *upper_bound_of(PyObject *module, PyObject *args)
{
    return of_one_key(args, "y#:upper_bound", upper_bound);
}

PyDoc_STRVAR(best_first_doc,
"best_first(start, budget, defer, narrow, bound, wins_only, /)\n--\n\n"
"Best-first search from the key ``start`` (52 bytes: a card code or 255 for a gap a\n"
"cell) within ``budget``; ``defer`` as gaps.frontier.best_first, ``narrow`` to narrow\n"
"near the memory budget (docs/solver.md, rule 7), ``bound`` to skip positions that\n"
"cannot place more than the best found (rule 8), or with ``wins_only`` that cannot win.\n\n"
"Returns (most placed, the stored keys from ``start`` to the best position, complete,\n"
"new positions met): what gaps.frontier.best_first computes, in the same order.");

static PyObject *best_first(PyObject *module, PyObject *args)
{
    const uint8_t *start;
    Py_ssize_t start_size;
    PyObject *budget;
    int defer, narrow, bound, wins_only;
    if (!PyArg_ParseTuple(args, "y#Opppp:best_first", &start, &start_size, &budget, &defer,
                          &narrow, &bound, &wins_only))
        return NULL;
    if (check_key(start, start_size) < 0)
        return NULL;
    long long max_nodes, nodes_before, tables_before;
    double memory_limit;
    if (read_budget(budget, &max_nodes, &nodes_before, &tables_before, &memory_limit) < 0)
        return NULL;

    Search s;
    memset(&s, 0, sizeof s);
    PyObject *result = NULL;
    uint8_t packed[16][PACKED];
    uint64_t hashes[16];
    pack(start, packed[0]);
    /* a stored position keeps its bound, read again when it leaves the frontier */
    packed[0][BOUND_AT] = (uint8_t)(bound ? upper_bound(start) : ALL_PLACED);
    if (store(&s, packed[0], hash_packed(packed[0]), NO_PARENT) < 0)
        goto done;
    int best, promise;
    key_value(start, NULL, &best, &promise);
    /* a position whose bound is no more than the best count or this floor is skipped */
    const int skip_floor = wins_only ? ALL_PLACED - 1 : -1;
    uint32_t best_index = 0;
    int top[3] = {0, 0, 0};
    long long waiting[3] = {0, 0, 0};
    if (stack_push(&s, &s.frontier[FORCED][promise + LOWEST], 0) < 0)
        goto done;
    top[FORCED] = promise + LOWEST;
    waiting[FORCED] = 1;
    long long nodes = 0, next_check = 0;
    int complete = 1, narrowed = 0;
    uint8_t cells[CELLS], where[CELLS], children[16][CELLS];
    Tiers tiers;
    while (best < ALL_PLACED) {
        if (nodes_before + nodes >= max_nodes || nodes >= next_check) {
            next_check = nodes + CHECK_EVERY;
            int going = check_budget(budget, nodes_before + nodes,
                                     tables_before + (long long)search_bytes(&s));
            if (going < 0)
                goto done;
            if (!going) {
                complete = 0;
                break;
            }
            if (narrow && tables_before + (double)search_bytes(&s) >= NARROW_AT * memory_limit) {
                if (narrow_search(&s, waiting, top, &best_index) < 0)
                    goto done;
                narrowed = 1;
            }
        }
        int level;
        if (waiting[FORCED])
            level = FORCED;
        else if (waiting[ORDINARY])
            level = ORDINARY;
        else if (waiting[POOR])
            level = POOR;
        else
            break;
        waiting[level]--;
        Stack *buckets = s.frontier[level];
        int index = top[level];
        while (buckets[index].size == 0)
            index--;
        top[level] = index;
        uint32_t key_index = buckets[index].items[--buckets[index].size];
        /* the best count may have risen since this position was stored */
        if (entry_at(&s, key_index)[BOUND_AT] <= (best > skip_floor ? best : skip_floor))
            continue;
        unpack(entry_at(&s, key_index), cells);
        int placed_rows[4], placed_now, promise_now;
        key_value(cells, placed_rows, &placed_now, &promise_now);
        for (int cell = 0; cell < CELLS; cell++)
            if (cells[cell] != GAP_BYTE)
                where[cells[cell]] = (uint8_t)cell;
        tiers_of(cells, placed_rows, where, &tiers);
        /* moves: which tiers (and how many forced) this expansion generates */
        int from_tier, to_tier, forced_only = 0, rest = -1;
        if (!defer) {
            from_tier = FORCED;
            to_tier = POOR;
        } else if (level == FORCED && tiers.count[FORCED]) {
            from_tier = to_tier = FORCED;
            forced_only = 1;
            if (tiers.count[FORCED] > 1 || tiers.count[ORDINARY] || tiers.count[POOR])
                rest = ORDINARY;
        } else if (level <= ORDINARY && (tiers.count[FORCED] || tiers.count[ORDINARY])) {
            from_tier = FORCED;
            to_tier = ORDINARY;
            if (tiers.count[POOR])
                rest = POOR;
        } else {
            from_tier = to_tier = POOR;
        }
        if (rest >= 0) {
            if (stack_push(&s, &s.frontier[rest][index], key_index) < 0)
                goto done;
            waiting[rest]++;
            if (index > top[rest])
                top[rest] = index;
        }
        /* the children first, their hash slots fetched while the next are made */
        int made = 0;
        for (int tier = from_tier; tier <= to_tier; tier++) {
            int count = forced_only ? 1 : tiers.count[tier];
            for (int i = 0; i < count; i++) {
                Move move = tiers.moves[tier][i];
                int came_from = where[move.code];
                int to = move.row * COLUMNS + move.column;
                cells[to] = move.code;
                cells[came_from] = GAP_BYTE;
                canonical(cells, children[made]);
                cells[came_from] = move.code;
                cells[to] = GAP_BYTE;
                pack(children[made], packed[made]);
                hashes[made] = hash_packed(packed[made]);
                __builtin_prefetch(&s.slots[hashes[made] & s.slot_mask]);
                made++;
            }
        }
        for (int i = 0; i < made; i++) {
            {
                const uint8_t *child = children[i];
                size_t slot;
                int found = lookup(&s, packed[i], hashes[i], &slot);
                if (found < 0)
                    goto done;
                if (found)
                    continue;
                /* a pruned child is not stored: met again, it is pruned again */
                int child_bound = bound ? upper_bound(child) : ALL_PLACED;
                if (child_bound <= (best > skip_floor ? best : skip_floor))
                    continue;
                packed[i][BOUND_AT] = (uint8_t)child_bound;
                if (insert(&s, packed[i], hashes[i], slot, key_index) < 0)
                    goto done;
                nodes++;
                uint32_t child_index = (uint32_t)s.count - 1;
                int placed, child_promise;
                key_value(child, NULL, &placed, &child_promise);
                if (placed > best) {
                    best = placed;
                    best_index = child_index;
                    if (placed == ALL_PLACED)
                        break;
                }
                int bucket = child_promise + LOWEST;
                if (stack_push(&s, &s.frontier[FORCED][bucket], child_index) < 0)
                    goto done;
                waiting[FORCED]++;
                if (bucket > top[FORCED])
                    top[FORCED] = bucket;
            }
        }
    }
    if (narrowed && best < ALL_PLACED) {
        complete = 0;
        /* every position kept was expanded: the memory budget ended the search */
        if (waiting[FORCED] + waiting[ORDINARY] + waiting[POOR] == 0
            && set_exhausted(budget, "memory") < 0)
            goto done;
    }
    if (best == ALL_PLACED)
        complete = 1;
    /* budget.nodes counts this search's nodes; its table is garbage from now on */
    if (set_long_long(budget, "nodes", nodes_before + nodes) < 0
        || set_long_long(budget, "table_bytes", tables_before) < 0)
        goto done;
    PyObject *chain = chain_to(&s, best_index);
    if (chain == NULL)
        goto done;
    result = Py_BuildValue("(iNOL)", best, chain, complete ? Py_True : Py_False, nodes);
done:
    search_free(&s);
    return result;
}

/* ---- The fewest moves (gaps.shortest): A* over the same table. ---- */

#define LONGEST 256 /* lines and estimates are below this: a byte holds a length */
/* The search stops (memory) when its table reaches this share of the memory budget: the
 * rest is the interpreter's, so that the process stays near the budget. */
#define STOP_AT 0.9

/* The cycles of cards each standing on the next one's home cell when suit s heads row
 * rows[s], as gaps.shortest._cycles. */
static int cycles_of(const uint8_t *cells, const uint8_t *where, const uint8_t *rows)
{
    uint8_t visited[CELLS] = {0};
    int cycles = 0;
    for (int first = 0; first < CELLS; first++) {
        if (first % 13 == 0 || visited[first])
            continue;
        int code = first;
        for (;;) {
            visited[code] = 1;
            int home = rows[code / 13] * COLUMNS + code % 13 - 1;
            if (where[code] == home)
                break;
            uint8_t standing = cells[home];
            if (standing == first) {
                cycles++;
                break;
            }
            if (standing == GAP_BYTE || visited[standing])
                break;
            code = standing;
        }
    }
    return cycles;
}

/* At least the moves any line from cells needs to win, as gaps.shortest.moves_to_win:
 * the cards off home plus the cycles, the fewest over the 24 ways to give the rows suits. */
static int moves_to_win(const uint8_t *cells)
{
    uint8_t where[CELLS];
    int home[4][4] = {{0}};
    for (int cell = 0; cell < CELLS; cell++)
        if (cells[cell] != GAP_BYTE)
            where[cells[cell]] = (uint8_t)cell;
    for (int code = 0; code < CELLS; code++)
        if (code % 13 && where[code] % COLUMNS == code % 13 - 1)
            home[code / 13][where[code] / COLUMNS]++;
    int off[24], tried[24] = {0};
    for (int p = 0; p < 24; p++)
        off[p] = ALL_PLACED - home[0][PERMUTATIONS[p][0]] - home[1][PERMUTATIONS[p][1]]
                 - home[2][PERMUTATIONS[p][2]] - home[3][PERMUTATIONS[p][3]];
    int best = 2 * ALL_PLACED;
    for (;;) {
        /* the fewest cards off home first: cycles only add, so the rest cannot do better */
        int pick = -1;
        for (int p = 0; p < 24; p++)
            if (!tried[p] && off[p] < best && (pick < 0 || off[p] < off[pick]))
                pick = p;
        if (pick < 0)
            return best;
        tried[pick] = 1;
        int estimate = off[pick] + cycles_of(cells, where, PERMUTATIONS[pick]);
        if (estimate < best)
            best = estimate;
    }
}

/* The estimate of the moves left to place target cards: moves_to_win for a win, else one
 * move while the count is short of it. */
static int estimate_of(const uint8_t *cells, int target)
{
    if (target == ALL_PLACED)
        return moves_to_win(cells);
    int placed, promise;
    key_value(cells, NULL, &placed, &promise);
    return placed >= target ? 0 : 1;
}

/* Allocates open[length], the stacks of one estimated length, unless it is: 0, or -1. */
static int open_row(Stack **open, int length, size_t *open_bytes)
{
    if (open[length] != NULL)
        return 0;
    if ((open[length] = PyMem_Calloc(LONGEST, sizeof(Stack))) == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    *open_bytes += LONGEST * sizeof(Stack);
    return 0;
}

PyDoc_STRVAR(moves_to_win_doc,
"moves_to_win(key, /)\n--\n\n"
"What gaps.shortest.moves_to_win(key) computes, for a key of 52 bytes.");

static PyObject *moves_to_win_of(PyObject *module, PyObject *args)
{
    return of_one_key(args, "y#:moves_to_win", moves_to_win);
}

PyDoc_STRVAR(fewest_moves_doc,
"fewest_moves(start, budget, target, longest, /)\n--\n\n"
"A* from the key ``start`` to a position placing ``target`` cards, looking only for lines\n"
"shorter than ``longest`` (below 256), within ``budget``: the search of\n"
"gaps.shortest.shortest_line. Returns (the stored keys from ``start`` to the position\n"
"found, or None; a lower bound on the moves of every line reaching ``target``; new\n"
"positions met). Without a line the bound is ``longest`` when every shorter line was\n"
"ruled out.");

static PyObject *fewest_moves(PyObject *module, PyObject *args)
{
    const uint8_t *start;
    Py_ssize_t start_size;
    PyObject *budget;
    int target, longest;
    if (!PyArg_ParseTuple(args, "y#Oii:fewest_moves", &start, &start_size, &budget, &target,
                          &longest))
        return NULL;
    if (check_key(start, start_size) < 0)
        return NULL;
    if (target < 0 || target > ALL_PLACED || longest < 0 || longest >= LONGEST) {
        PyErr_Format(PyExc_ValueError, "a target of 0 to 48 cards and a longest line below "
                     "256 moves, not %d and %d", target, longest);
        return NULL;
    }
    long long max_nodes, nodes_before, tables_before;
    double memory_limit;
    if (read_budget(budget, &max_nodes, &nodes_before, &tables_before, &memory_limit) < 0)
        return NULL;
    int start_estimate = estimate_of(start, target);
    if (start_estimate >= longest)
        return Py_BuildValue("(OiL)", Py_None, longest, 0LL);

    /* A stored position's bound byte holds the moves of the shortest line to it found so
     * far. open[f][g] holds the positions waiting with estimated length f and g moves
     * made: the least f first, the most moves among equals (deepest first); a row open[f]
     * is allocated when first used. An entry whose position was reached by a shorter line
     * since is stale: skipped. */
    Search s;
    memset(&s, 0, sizeof s);
    PyObject *result = NULL;
    Stack *open[LONGEST] = {NULL};
    long long waiting[LONGEST] = {0};
    size_t open_bytes = 0;
    uint8_t packed[16][PACKED];
    uint64_t hashes[16];
    uint8_t cells[CELLS], children[16][CELLS];
    pack(start, packed[0]);
    packed[0][BOUND_AT] = 0;
    if (store(&s, packed[0], hash_packed(packed[0]), NO_PARENT) < 0)
        goto done;
    if (open_row(open, start_estimate, &open_bytes) < 0
        || stack_push(&s, &open[start_estimate][0], 0) < 0)
        goto done;
    waiting[start_estimate] = 1;
    int length = start_estimate, stopped = 0;
    uint32_t found = NO_PARENT;
    long long nodes = 0, next_check = 0;
    for (;;) {
        if (nodes_before + nodes >= max_nodes || nodes >= next_check) {
            next_check = nodes + CHECK_EVERY;
            long long table_bytes = tables_before + (long long)(search_bytes(&s) + open_bytes);
            int going = check_budget(budget, nodes_before + nodes, table_bytes);
            if (going < 0)
                goto done;
            if (going && table_bytes >= STOP_AT * memory_limit) {
                if (set_exhausted(budget, "memory") < 0)
                    goto done;
                going = 0;
            }
            if (!going) {
                stopped = 1;
                break;
            }
        }
        while (length < longest && waiting[length] == 0)
            length++;
        if (length >= longest)
            break; /* nothing shorter than longest is left */
        int made = LONGEST - 1;
        while (open[length][made].size == 0)
            made--;
        Stack *bucket = &open[length][made];
        uint32_t index = bucket->items[--bucket->size];
        waiting[length]--;
        uint8_t *entry = entry_at(&s, index);
        if (entry[BOUND_AT] != made)
            continue; /* stale */
        unpack(entry, cells);
        int placed, promise;
        key_value(cells, NULL, &placed, &promise);
        if (placed >= target) {
            found = index;
            break;
        }
        int count = 0;
        for (int gap = 0; gap < CELLS; gap++) {
            if (cells[gap] != GAP_BYTE)
                continue;
            uint8_t movers[4];
            int movers_count = 0;
            if (gap % COLUMNS == 0) {
                memcpy(movers, TWOS, 4);
                movers_count = 4;
            } else if (!is_dead(cells[gap - 1])) {
                movers[movers_count++] = cells[gap - 1] + 1;
            }
            for (int i = 0; i < movers_count; i++) {
                uint8_t code = movers[i];
                int came_from = 0;
                while (cells[came_from] != code)
                    came_from++;
                cells[gap] = code;
                cells[came_from] = GAP_BYTE;
                canonical(cells, children[count]);
                cells[came_from] = code;
                cells[gap] = GAP_BYTE;
                pack(children[count], packed[count]);
                hashes[count] = hash_packed(packed[count]);
                __builtin_prefetch(&s.slots[hashes[count] & s.slot_mask]);
                count++;
            }
        }
        int child_made = made + 1;
        for (int i = 0; i < count; i++) {
            size_t slot;
            int seen = lookup(&s, packed[i], hashes[i], &slot);
            if (seen < 0)
                goto done;
            uint32_t child_index = 0;
            if (seen) {
                child_index = (s.slots[slot] & INDEX_MASK) - 1;
                if (entry_at(&s, child_index)[BOUND_AT] <= child_made)
                    continue;
            }
            int child_estimate = estimate_of(children[i], target);
            if (child_made + child_estimate >= longest)
                continue; /* cannot beat the known line */
            if (!seen) {
                if (upper_bound(children[i]) < target)
                    continue; /* never places the target: not stored, pruned again if met */
                packed[i][BOUND_AT] = (uint8_t)child_made;
                if (insert(&s, packed[i], hashes[i], slot, index) < 0)
                    goto done;
                child_index = (uint32_t)s.count - 1;
                nodes++;
            } else {
                uint8_t *child = entry_at(&s, child_index);
                child[BOUND_AT] = (uint8_t)child_made;
                memcpy(child + PACKED, &index, 4);
            }
            int child_length = child_made + child_estimate;
            if (open_row(open, child_length, &open_bytes) < 0
                || stack_push(&s, &open[child_length][child_made], child_index) < 0)
                goto done;
            waiting[child_length]++;
        }
    }
    int lower_bound = longest;
    if (found != NO_PARENT) {
        lower_bound = entry_at(&s, found)[BOUND_AT];
    } else if (stopped) {
        /* the least estimated length of a waiting entry that is not stale: with a
         * consistent estimate no line still to be found is shorter */
        for (int f = length; f < longest && lower_bound == longest; f++) {
            if (waiting[f] == 0)
                continue;
            for (int g = 0; g < LONGEST && lower_bound == longest; g++) {
                Stack *bucket = &open[f][g];
                for (size_t k = 0; k < bucket->size; k++)
                    if (entry_at(&s, bucket->items[k])[BOUND_AT] == g) {
                        lower_bound = f;
                        break;
                    }
            }
        }
    }
    /* budget.nodes counts this search's nodes; its table is garbage from now on */
    if (set_long_long(budget, "nodes", nodes_before + nodes) < 0
        || set_long_long(budget, "table_bytes", tables_before) < 0)
        goto done;
    if (found == NO_PARENT) {
        result = Py_BuildValue("(OiL)", Py_None, lower_bound, nodes);
        goto done;
    }
    PyObject *chain = chain_to(&s, found);
    if (chain == NULL)
        goto done;
    result = Py_BuildValue("(NiL)", chain, lower_bound, nodes);
done:
    for (int f = 0; f < LONGEST; f++) {
        if (open[f] == NULL)
            continue;
        for (int g = 0; g < LONGEST; g++)
            PyMem_Free(open[f][g].items);
        PyMem_Free(open[f]);
    }
    search_free(&s);
    return result;
}

static PyMethodDef methods[] = {
    {"best_first", best_first, METH_VARARGS, best_first_doc},
    {"upper_bound", upper_bound_of, METH_VARARGS, upper_bound_doc},
    {"fewest_moves", fewest_moves, METH_VARARGS, fewest_moves_doc},
    {"moves_to_win", moves_to_win_of, METH_VARARGS, moves_to_win_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "gaps._speedups",
    "The compiled core of gaps.frontier's best-first search and gaps.bound (optional).", -1,
    methods,
};

PyMODINIT_FUNC PyInit__speedups(void) { return PyModule_Create(&module); }
