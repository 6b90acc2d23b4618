// The emulator library: kernels.cu compiled for the CPU with emu.h, and a
// C API that package cuda's tests load in place of the driver (memory is
// host memory, a launch runs the kernel's threads as fibers).
// registry.inc, written by the test, lists REG(name) for every kernel.
#include "emu.h"

#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include KERNELS_CU

namespace emu {

template <typename T>
constexpr char kind() {
    if constexpr (std::is_pointer_v<T>) return 'p';
    else if constexpr (std::is_same_v<T, float>) return 'f';
    else if constexpr (std::is_same_v<T, double>) return 'd';
    else if constexpr (std::is_integral_v<T> && sizeof(T) == 4) return 'i';
    else if constexpr (std::is_integral_v<T> && sizeof(T) == 8) return 'l';
    else return '?';
}

template <typename... Args, size_t... I>
void call_impl(void (*f)(Args...), void** p, std::index_sequence<I...>) {
    f(*(std::remove_reference_t<Args>*)p[I]...);
}

template <typename... Args>
void call(void (*f)(Args...), void** p) {
    call_impl(f, p, std::index_sequence_for<Args...>{});
}

template <typename... Args>
std::string sig(void (*)(Args...)) {
    return std::string{kind<Args>()...};
}

struct Entry {
    const char* name;
    void (*invoke)(void**);
    std::string (*signature)();
};

#define REG(f) {#f, [](void** p) { emu::call(f, p); }, []() { return emu::sig(f); }},
static Entry entries[] = {
#include "registry.inc"
};

static const Entry* find(const char* name) {
    for (auto& e : entries)
        if (std::strcmp(e.name, name) == 0) return &e;
    return nullptr;
}

struct LaunchArg {
    const Entry* e;
    void** params;
};

static void body(void* a) {
    LaunchArg* l = (LaunchArg*)a;
    l->e->invoke(l->params);
}

}  // namespace emu

extern "C" {

// emu_signature writes the kernel's argument kinds (p pointer, i int32,
// l int64, f float, d double) into out (NUL-terminated); 0, or 1 if there
// is no such kernel.
int emu_signature(const char* name, char* out, int n) {
    const emu::Entry* e = emu::find(name);
    if (!e) return 1;
    std::string s = e->signature();
    std::snprintf(out, n, "%s", s.c_str());
    return 0;
}

int emu_launch(const char* name, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, void** params) {
    const emu::Entry* e = emu::find(name);
    if (!e) return 1;
    emu::LaunchArg a{e, params};
    dim3 g, b;
    g.x = gx, g.y = gy, g.z = gz;
    b.x = bx, b.y = by, b.z = bz;
    int r = emu::run(g, b, emu::body, &a);
    return r == 0 ? 0 : r == 3 ? 3 : 2;
}

// emu_malloc returns memory filled with 0xFF bytes (NaN floats): device
// memory is not zeroed either, so a kernel that reads what it never wrote
// shows.
void* emu_malloc(size_t n) {
    void* p = std::malloc(n == 0 ? 1 : n);
    if (p) std::memset(p, 0xFF, n == 0 ? 1 : n);
    return p;
}
void emu_free(void* p) { std::free(p); }
void emu_memcpy(void* dst, const void* src, size_t n) { std::memcpy(dst, src, n); }
void emu_memset32(void* dst, unsigned v, size_t n) {
    unsigned* d = (unsigned*)dst;
    for (size_t i = 0; i < n; i++) d[i] = v;
}
void emu_memset8(void* dst, unsigned char v, size_t n) { std::memset(dst, v, n); }
}
