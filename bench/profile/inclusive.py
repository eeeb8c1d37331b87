import sys, re, collections
# usage: perf script -F comm,ip,sym -i perf.data | python3 inclusive.py [N]: the N functions with the largest inclusive share of the samples
N = int(sys.argv[1]) if len(sys.argv) > 1 else 80
incl = collections.Counter(); selfc = collections.Counter(); total = 0
stack = []
def flush():
    global total
    if not stack: return
    total += 1
    selfc[stack[0]] += 1
    for s in set(stack): incl[s] += 1
for line in sys.stdin:
    line = line.rstrip('\n')
    if not line.strip():
        flush(); stack = []; continue
    if line.startswith((' ', '\t')):
        parts = line.strip().split(None, 1)
        sym = parts[1] if len(parts) > 1 else '?'
        sym = re.sub(r'\+0x[0-9a-f]+$', '', sym)
        sym = re.sub(r'::h[0-9a-f]{16}$', '', sym)
        sym = re.sub(r'<.*?>', '<>', sym) if len(sym) > 120 else sym
        stack.append(sym[:110])
    else:
        flush(); stack = []
flush()
print('samples', total)
for s, c in incl.most_common(N):
    print(f'{100*c/total:6.2f}% {100*selfc[s]/total:6.2f}%  {s}')
