/* stands for an object of QEMU's hw/nvme */
int nvme_post(int x)
{
    return x + 3;
}
