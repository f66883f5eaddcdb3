/* An arena: blocks of memory handed out in order and freed together. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define BLOCK_SIZE 4096
#define ALIGNMENT 16

typedef struct block {
  struct block *next;
  size_t size;
  size_t used;
  /* The memory follows, aligned. */
} block;

struct licvi_arena {
  block *blocks;
};

/* The header's size, rounded up so that the memory after it is aligned. */
static size_t header_size(void) {
  return (sizeof(block) + ALIGNMENT - 1) / ALIGNMENT * ALIGNMENT;
}

licvi_arena *licvi_arena_new(void) {
  return calloc(1, sizeof(licvi_arena));
}

void licvi_arena_free(licvi_arena *arena) {
  block *b;
  if (arena == NULL) return;
  b = arena->blocks;
  while (b != NULL) {
    block *next = b->next;
    free(b);
    b = next;
  }
  free(arena);
}

void *licvi_alloc(licvi_arena *arena, size_t size) {
  block *b;
  size_t rounded;
  unsigned char *memory;
  if (arena == NULL) return NULL;
  if (size > ((size_t)-1) / 2) return NULL;
  rounded = (size + ALIGNMENT - 1) / ALIGNMENT * ALIGNMENT;
  if (rounded == 0) rounded = ALIGNMENT;
  b = arena->blocks;
  if (b == NULL || b->size - b->used < rounded) {
    /* A large request gets a block of its own, behind the current one. */
    size_t size_of_block = rounded > BLOCK_SIZE / 4 ? rounded : BLOCK_SIZE;
    block *fresh = malloc(header_size() + size_of_block);
    if (fresh == NULL) return NULL;
    fresh->size = size_of_block;
    fresh->used = 0;
    if (b != NULL && size_of_block != BLOCK_SIZE) {
      fresh->next = b->next;
      b->next = fresh;
    } else {
      fresh->next = b;
      arena->blocks = fresh;
    }
    b = fresh;
  }
  memory = (unsigned char *)b + header_size() + b->used;
  b->used += rounded;
  memset(memory, 0, rounded);
  return memory;
}

char *licvi_strndup(licvi_arena *arena, const char *text, size_t length) {
  char *copy;
  if (length == (size_t)-1) return NULL;
  copy = licvi_alloc(arena, length + 1);
  if (copy == NULL) return NULL;
  if (length > 0) memcpy(copy, text, length);
  copy[length] = '\0';
  return copy;
}
