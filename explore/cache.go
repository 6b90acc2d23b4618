package explore

import (
	"container/list"
	"sync"
)

// cache keeps computed window views under a memory budget, least recently
// used first out; concurrent requests for one key compute it once.
type cache struct {
	mu      sync.Mutex
	budget  int64
	used    int64
	entries map[string]*list.Element
	lru     *list.List // front: most recent
}

type cacheEntry struct {
	key   string
	done  chan struct{}
	value any
	size  int64
	err   error
}

func newCache(budget int64) *cache {
	return &cache{budget: budget, entries: map[string]*list.Element{}, lru: list.New()}
}

// get returns the value of key, computing it with compute (value, its size
// in bytes, error) when absent. Errors are not cached.
func (c *cache) get(key string, compute func() (any, int64, error)) (any, error) {
	c.mu.Lock()
	if el, ok := c.entries[key]; ok {
		c.lru.MoveToFront(el)
		e := el.Value.(*cacheEntry)
		c.mu.Unlock()
		<-e.done
		return e.value, e.err
	}
	e := &cacheEntry{key: key, done: make(chan struct{})}
	el := c.lru.PushFront(e)
	c.entries[key] = el
	c.mu.Unlock()

	func() {
		defer func() {
			if r := recover(); r != nil {
				e.err = panicError(r)
			}
		}()
		e.value, e.size, e.err = compute()
	}()
	close(e.done)

	c.mu.Lock()
	defer c.mu.Unlock()
	if e.err != nil {
		if c.entries[key] == el {
			delete(c.entries, key)
			c.lru.Remove(el)
		}
		return nil, e.err
	}
	c.used += e.size
	// evict the least recently used finished entries, never the new one
	for c.used > c.budget {
		back := c.lru.Back()
		if back == nil || back == el {
			break
		}
		be := back.Value.(*cacheEntry)
		select {
		case <-be.done:
		default:
			// still computing: its size is not counted yet
			c.lru.MoveToFront(back)
			continue
		}
		c.lru.Remove(back)
		delete(c.entries, be.key)
		c.used -= be.size
	}
	return e.value, nil
}
