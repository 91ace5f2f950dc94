! A heat-equation application in Fortran: look the tuned kernel up at start-up (with a miss
! policy), run the time loop, print GCells/s, and check the result against the naive kernel.
!   heat_f90 SPEC [fail|naive|nearest|model]
! Exit: 0 matches the naive kernel, 1 differs, 2 error, 3 no kernel (a miss under fail, no GPU).
program heat
  use, intrinsic :: iso_c_binding
  use tbtune
  implicit none
  integer(c_long), parameter :: steps = 1000
  character(len=512) :: spec, policy
  type(tbtune_options) :: opts
  type(c_ptr) :: kernel, naive
  integer(c_int) :: reason, dtype
  integer(c_long) :: domain(3)
  integer(c_long) :: nx, ny, x, y
  real(c_double), allocatable, target :: field(:), tuned(:), expected(:)
  real(c_double) :: seconds, worst

  if (command_argument_count() < 1) then
    write (0, '(a)') 'usage: heat_f90 SPEC [fail|naive|nearest|model]'
    stop 2
  end if
  call get_command_argument(1, spec)
  if (command_argument_count() > 1) then
    call get_command_argument(2, policy)
    select case (trim(policy))
    case ('fail'); opts%policy = TBTUNE_POLICY_FAIL
    case ('naive'); opts%policy = TBTUNE_POLICY_NAIVE
    case ('nearest'); opts%policy = TBTUNE_POLICY_NEAREST
    case ('model'); opts%policy = TBTUNE_POLICY_MODEL
    case default
      write (0, '(3a)') "heat_f90: policy '", trim(policy), "': expected fail, naive, nearest or model"
      stop 2
    end select
  end if

  call ok(tbtune_lookup(spec, opts, kernel, reason))
  write (*, '(4a)') 'lookup (', tbtune_reason(reason), '): ', tbtune_message()
  if (.not. c_associated(kernel)) stop 3

  call ok(tbtune_kernel_shape(kernel, domain, dtype))
  if (dtype /= TBTUNE_DTYPE_DOUBLE) then
    write (0, '(a)') 'heat_f90: this example runs double precision only'
    stop 2
  end if
  nx = domain(1)
  ny = domain(2)
  opts%nx = nx  ! the naive reference for the same domain
  opts%ny = ny
  opts%nz = 1
  allocate(field(nx * ny), tuned(nx * ny), expected(nx * ny))
  do y = 0, ny - 1  ! a hot square in a cold plate
    do x = 0, nx - 1
      field(y * nx + x + 1) = merge(1.0_c_double, 0.0_c_double, &
                                    abs(x - nx / 2) < nx / 8 .and. abs(y - ny / 2) < ny / 8)
    end do
  end do

  seconds = simulate(kernel, tuned)
  write (*, '(a, a, a, i0, a, f8.3, a, f8.1, a)') 'heat2d: ', tbtune_strategy(kernel), ', ', steps, &
    ' steps in ', seconds, ' s: ', real(nx - 2, c_double) * real(ny - 2, c_double) * steps / seconds / 1e9, &
    ' GCells/s'
  call ok(tbtune_naive(spec, opts, naive))
  seconds = simulate(naive, expected)
  worst = maxval(abs(tuned - expected) / max(abs(expected), 1.0_c_double))
  if (worst <= 1e-9_c_double) then
    write (*, '(a, es10.3)') 'PASS: max relative difference to the naive kernel ', worst
  else
    write (*, '(a, es10.3)') 'FAIL: max relative difference to the naive kernel ', worst
  end if
  call tbtune_kernel_free(naive)
  call tbtune_kernel_free(kernel)
  if (worst > 1e-9_c_double) stop 1

contains

  subroutine ok(status)
    integer(c_int), intent(in) :: status
    if (status /= TBTUNE_OK) then
      write (0, '(2a)') 'heat_f90: ', tbtune_message()
      stop 2
    end if
  end subroutine

  ! Runs k for `steps` from `field` into `out`; returns the seconds it took.
  real(c_double) function simulate(k, out)
    type(c_ptr), intent(in) :: k
    real(c_double), intent(out), target :: out(:)
    type(c_ptr) :: a, b, result
    integer(c_size_t) :: bytes
    integer(8) :: t0, t1, rate
    bytes = int(size(field), c_size_t) * 8_c_size_t
    call ok(tbtune_device_alloc(bytes, a))
    call ok(tbtune_device_alloc(bytes, b))
    call ok(tbtune_copy_to_device(a, c_loc(field), bytes))
    call ok(tbtune_copy_to_device(b, c_loc(field), bytes))  ! both hold the fixed boundary ring
    call system_clock(t0, rate)
    call ok(tbtune_run(k, a, b, steps, c_null_ptr, result))
    call ok(tbtune_synchronize())
    call system_clock(t1)
    simulate = real(t1 - t0, c_double) / real(rate, c_double)
    call ok(tbtune_copy_to_host(c_loc(out), result, bytes))
    call ok(tbtune_device_free(a))
    call ok(tbtune_device_free(b))
  end function

end program heat
