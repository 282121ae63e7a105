/* stands for the rest of QEMU: the main loop, and a copy of an inline */
int aio_poll(int x)
{
    return x;
}

int shared_inline(int x)
{
    return x * 2;
}
