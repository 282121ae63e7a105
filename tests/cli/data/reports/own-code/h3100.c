/* stands for an object of hw/dapustor-h3100: its own symbol and a copy */
int h3100_post(int x)
{
    return x + 1;
}

int shared_inline(int x)
{
    return x * 2;
}
